import type pg from 'pg';

// The back office's operators. The password is kept only as an argon2id hash (made and checked
// by the caller); the address is lower-cased so one person has one account however it is typed.
// Changing a password, role or enabled state ends every session of the operator: a trigger
// (migration operator_sessions) counts up session_generation and deletes their session rows.

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** Each may do what the one before may: an approver also decides payouts awaiting approval. */
export const operatorRoles = ['viewer', 'reviewer', 'approver', 'admin'] as const;
export type OperatorRole = (typeof operatorRoles)[number];

/** The languages the back office speaks; Brazilian Portuguese unless the operator chose English. */
export const operatorLanguages = ['pt-BR', 'en'] as const;
export type OperatorLanguage = (typeof operatorLanguages)[number];

export interface Operator {
  id: number;
  email: string;
  name: string;
  role: OperatorRole;
  timeZone: string;
  language: OperatorLanguage;
  disabled: boolean;
  /** A session signed in under another generation is over. */
  sessionGeneration: number;
}

export interface NewOperator {
  email: string;
  /** Unset: the address for a new one, unchanged for one reset. */
  name?: string;
  /** Unset: viewer for a new one, unchanged for one reset. */
  role?: OperatorRole;
  passwordHash: string;
  /** Unset: America/Sao_Paulo for a new one, unchanged for one reset. */
  timeZone?: string;
  /** Unset: pt-BR for a new one, unchanged for one reset. */
  language?: OperatorLanguage;
}

/**
 * Creates the operator, or with `replace` sets an existing one's password (and name, role or zone
 * when given) and enables it again: the CLI's reset. False when it exists and `replace` is not set.
 */
export async function saveOperator(db: Queryable, o: NewOperator, replace = false): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO operators (email, name, role, password_hash, time_zone, language)
     VALUES (lower($1), COALESCE($2, lower($1)), COALESCE($3, 'viewer'), $4, COALESCE($5, 'America/Sao_Paulo'),
             COALESCE($6, 'pt-BR'))
     ON CONFLICT (email) DO ${
       replace
         ? `UPDATE SET name = COALESCE($2, operators.name), role = COALESCE($3, operators.role),
                       password_hash = EXCLUDED.password_hash, time_zone = COALESCE($5, operators.time_zone),
                       language = COALESCE($6, operators.language), disabled_at = NULL, updated_at = now()`
         : 'NOTHING'
     }`,
    [o.email, o.name ?? null, o.role ?? null, o.passwordHash, o.timeZone ?? null, o.language ?? null],
  );
  return (rowCount ?? 0) > 0;
}

interface OperatorDbRow {
  id: number;
  email: string;
  name: string;
  role: OperatorRole;
  time_zone: string;
  language: OperatorLanguage;
  disabled_at: Date | null;
  password_hash: string;
  session_generation: number;
}

const operatorOf = (r: OperatorDbRow): Operator => ({
  id: r.id,
  email: r.email,
  name: r.name,
  role: r.role,
  timeZone: r.time_zone,
  language: r.language,
  disabled: r.disabled_at !== null,
  sessionGeneration: r.session_generation,
});

/** The operator and their password hash, for signing in; undefined when no such address. */
export async function operatorForSignIn(
  db: Queryable,
  email: string,
): Promise<{ operator: Operator; passwordHash: string } | undefined> {
  const { rows } = await db.query<OperatorDbRow>('SELECT * FROM operators WHERE email = lower($1)', [email]);
  const r = rows[0];
  return r ? { operator: operatorOf(r), passwordHash: r.password_hash } : undefined;
}

export async function getOperator(db: Queryable, id: number): Promise<Operator | undefined> {
  const { rows } = await db.query<OperatorDbRow>('SELECT * FROM operators WHERE id = $1', [id]);
  return rows[0] ? operatorOf(rows[0]) : undefined;
}

export async function disableOperator(db: Queryable, email: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'UPDATE operators SET disabled_at = now(), updated_at = now() WHERE email = lower($1) AND disabled_at IS NULL',
    [email],
  );
  return (rowCount ?? 0) > 0;
}

/** Sets an enabled operator's role; false when there is no such enabled operator. */
export async function setOperatorRole(db: Queryable, email: string, role: OperatorRole): Promise<boolean> {
  const { rowCount } = await db.query(
    'UPDATE operators SET role = $2, updated_at = now() WHERE email = lower($1) AND disabled_at IS NULL',
    [email, role],
  );
  return (rowCount ?? 0) > 0;
}

/** Sets the language an operator's pages are in; a preference, so their sessions go on. */
export async function setOperatorLanguage(
  db: Queryable,
  id: number,
  language: OperatorLanguage,
): Promise<void> {
  await db.query('UPDATE operators SET language = $2, updated_at = now() WHERE id = $1', [id, language]);
}
