-- Roles (what a client may do, beside the sites and cameras it reaches): every client there is
-- keeps the rights it had, which is the role `full`.
ALTER TABLE clients
  ADD COLUMN role text NOT NULL DEFAULT 'full'
    CONSTRAINT clients_role_known CHECK (role IN ('full', 'viewer', 'operator', 'edge'));
