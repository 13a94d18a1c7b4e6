import type { OperatorRole } from '../db/operators';

// Who may do what in the back office: each role may do all that the roles below it may. Its own
// module, so the menu can ask it without the session's (which reaches the page renderer).

const rank: Record<OperatorRole, number> = { viewer: 0, reviewer: 1, approver: 2, admin: 3 };
export const roleAtLeast = (role: OperatorRole, least: OperatorRole) => rank[role] >= rank[least];
