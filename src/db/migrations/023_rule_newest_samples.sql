-- The rule evaluator's newest samples not yet in their rules' rows (src/alarms/rules/evaluator.ts):
-- a pass that evaluates a rule without changing its condition, its delay or its alarm (the usual
-- case) does not rewrite that rule's row of alarm_rules; the newest sample it evaluated (its time,
-- which makes older samples late, and its value, that of a raise by the clock) goes into this one
-- row instead, with the position, in the same commit. JSON: [[rule id, the row's last_ts when it
-- was written (epoch ms), newest sample time (epoch ms), its value], ...]. An entry holds only
-- while the row's last_ts is the one it was written on: every write of the row (the evaluator's,
-- or an import that starts the rule afresh) makes it stale. Bounded (the evaluator writes its
-- rules' rows instead past a few thousand), so a pass never writes more than a few kilobytes here.
ALTER TABLE alarm_rule_cursor ADD COLUMN unsaved text NOT NULL DEFAULT '[]';
