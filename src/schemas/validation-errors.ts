import type { ErrorDetail } from '../errors.js';

// Ajv reports a failed union (TypeBox Union -> anyOf) as one error per branch plus "must match a
// schema in anyOf": three lines for `dataType=bogus`, none of them naming the allowed values. Here
// the issues become one detail per problem: the field, and what it must be.

export interface AjvIssue {
  instancePath: string;
  schemaPath: string;
  message?: string;
  keyword: string;
  params: Record<string, unknown>;
  /** With Ajv's `verbose`: the schema holding the failed keyword. */
  parentSchema?: { description?: string };
}

const article = (type: string) => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);
const listOf = (values: unknown[]) =>
  values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ');

/** What one failed keyword asks for, as a phrase after "must be" (undefined when it has none). */
function wanted(issue: AjvIssue): string | undefined {
  switch (issue.keyword) {
    case 'const':
      return JSON.stringify(issue.params.allowedValue);
    case 'enum':
      return `one of: ${listOf(issue.params.allowedValues as unknown[])}`;
    case 'type':
      return article(String(issue.params.type));
    case 'pattern':
    case 'format':
      return issue.parentSchema?.description;
    default:
      return undefined;
  }
}

function messageOf(issue: AjvIssue): string {
  if (issue.keyword === 'required') return 'is required';
  if (
    issue.keyword === 'const' ||
    issue.keyword === 'enum' ||
    (issue.keyword === 'pattern' && issue.parentSchema?.description)
  )
    return `must be ${wanted(issue)}`;
  return issue.message ?? 'is invalid';
}

/** One issue for a whole anyOf: the deeper failure when the value had the right shape, else the allowed forms. */
function summariseAnyOf(union: AjvIssue, branches: AjvIssue[]): AjvIssue[] {
  const deeper = branches.filter((b) => b.instancePath.startsWith(`${union.instancePath}/`));
  if (deeper.length) return [deeper[0]];
  const byBranch = new Map<string, AjvIssue[]>();
  for (const b of branches) {
    const branch = b.schemaPath.slice(union.schemaPath.length + 1).split('/')[0];
    byBranch.set(branch, [...(byBranch.get(branch) ?? []), b]);
  }
  const forms = [...byBranch.values()].map((issues) => {
    const constant = issues.find((i) => i.keyword === 'const' || i.keyword === 'enum');
    return wanted(constant ?? issues[0]) ?? issues[0].message ?? 'another form';
  });
  const allConstants = [...byBranch.values()].every((issues) =>
    issues.some((i) => i.keyword === 'const'),
  );
  const message = allConstants
    ? `must be one of: ${listOf([...byBranch.values()].map((issues) => issues.find((i) => i.keyword === 'const')!.params.allowedValue))}`
    : `must be ${[...new Set(forms)].join(' or ')}`;
  return [{ ...union, keyword: 'anyOf:summary', message }];
}

/** Folds each anyOf with its branches' issues into one issue; every other issue stays. */
function foldUnions(issues: AjvIssue[]): AjvIssue[] {
  const unions = issues.filter((i) => i.keyword === 'anyOf' || i.keyword === 'oneOf');
  // Innermost unions first, so an outer union sees the summary of an inner one.
  unions.sort((a, b) => b.schemaPath.length - a.schemaPath.length);
  let rest = issues;
  for (const union of unions) {
    if (!rest.includes(union)) continue;
    const inBranch = (i: AjvIssue) =>
      i !== union && i.schemaPath.startsWith(`${union.schemaPath}/`);
    const summary = summariseAnyOf(union, rest.filter(inBranch));
    rest = rest.flatMap((i) => (i === union ? summary : inBranch(i) ? [] : [i]));
  }
  return rest;
}

const PART: Record<string, string> = {
  querystring: 'query parameter',
  params: 'path parameter',
  headers: 'header',
};

/**
 * The error body's details for a failed validation: one per problem, each with a JSON pointer
 * (relative to the part of the request: a query parameter is `/perPage`) and a message that names
 * the field and what it must be.
 */
export function detailsOf(issues: AjvIssue[], context: string | undefined): ErrorDetail[] {
  const seen = new Set<string>();
  const details: ErrorDetail[] = [];
  for (const issue of foldUnions(issues)) {
    let path = issue.instancePath || '';
    if (issue.keyword === 'required') path += `/${String(issue.params.missingProperty)}`;
    const part = context ? PART[context] : undefined;
    const field = part ? `${part} ${path.slice(1) || '(all)'}` : path || 'the body';
    const detail = {
      path: path || '/',
      message: `${field} ${issue.keyword === 'anyOf:summary' ? issue.message : messageOf(issue)}`,
    };
    const key = `${detail.path}\n${detail.message}`;
    if (!seen.has(key)) details.push(detail);
    seen.add(key);
  }
  return details.slice(0, 20);
}
