// The import rules of the tree, checked in CI (`npm run lint:deps`). Layers, lowest first:
//   signed-requests  ->  eligibility, db  ->  common  ->  contracts  ->  connectors, policy, starters
//   ->  activities, workflows  ->  http  ->  api-keys, customers  ->  ingress, events, monitoring, backoffice
//   ->  api  ->  nexus  ->  worker, sandbox  ->  scripts, bench
// `policy` holds the rules every process decides with: their schema, their versions in Postgres
// (through db/), how a process follows the version in force, and how admins change them.
// `starters` starts the flows, whoever asks: one module per flow, answering typed outcomes
// (started, attached, refused, conflict), never an HTTP status. It knows the contracts and a Temporal
// client (with the calls every surface makes of Temporal, starters/workflow-calls.ts), no workflow
// code, no table and no surface; a withdrawal's step-up activity starts the person's biometric
// identification through it. The API process is six rooms: `http` (the plumbing every
// surface shares), `api-keys` and `customers` (what several surfaces read), the three surfaces
// beside each other (the provider's `ingress`, the outbound `events`, the operators' `backoffice`)
// and `api`, the backend API, which also assembles the process. `monitoring` (the alert monitor
// over the outbox) runs in the API process beside the events relay and knows no surface. A module
// imports from its own folder and the layers below it, never from a layer above or a sibling, and
// no two modules import each other, even through others or for types only. `nexus`, pixflow's
// Nexus service, starts flows through the same starters and rules as the API, and the worker
// serves it.
const layer = (from, notTo, comment, except) => ({
  name: `layer: ${from}`,
  comment,
  severity: 'error',
  from: { path: `^${from}/` },
  to: { path: `^(${notTo})/`, ...(except ? { pathNot: except } : {}) },
});

/** The connectors, one folder each under connectors/. */
const CONNECTOR_FOLDERS = ['identity-payments', 'api-pix'];

/** The rooms of the API process, lowest first. */
const API_ROOMS = 'http|api-keys|customers|ingress|events|monitoring|backoffice|api';
/** Above the API's rooms: the Nexus service (the worker serves it), then the services. */
const SERVICES = 'nexus|worker|sandbox|scripts|bench';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Modules that import each other cannot be understood, tested or moved one at a time.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    layer(
      'common',
      `starters|db|connectors|contracts|policy|activities|workflows|${API_ROOMS}|${SERVICES}`,
      'common serves every process: it knows no flow and no service.',
    ),
    layer(
      'policy',
      `starters|connectors|activities|workflows|${API_ROOMS}|${SERVICES}`,
      'the rules policy knows Postgres (through db/) and the configuration that seeds it: no provider, no flow code, no surface.',
    ),
    layer(
      'connectors',
      `starters|db|policy|activities|workflows|${API_ROOMS}|${SERVICES}`,
      "a connector turns one provider's wire into pixflow's own types: it knows no table, no flow code and no surface.",
    ),
    // One rule per connector folder: each one's wire is its own, even from another connector.
    ...CONNECTOR_FOLDERS.map((folder) => ({
      name: `connectors: ${folder}'s wire stays inside`,
      comment:
        "a connector's wire schemas, transport and transformers are its own: the rest of pixflow reaches it through its index and pixflow's types (connectors/types.ts, connectors/errors.ts). Only the sandbox, which emulates the providers, speaks their wire.",
      severity: 'error',
      from: { pathNot: `^(connectors/${folder}|sandbox)/` },
      to: { path: `^connectors/${folder}/`, pathNot: `^connectors/${folder}/index\\.ts$` },
    })),
    layer(
      'signed-requests',
      `starters|eligibility|common|db|connectors|contracts|policy|activities|workflows|${API_ROOMS}|${SERVICES}`,
      "pixflow's signed POST to an operator's service and its receiving side: it knows no service, no contract of theirs.",
    ),
    layer(
      'eligibility',
      `starters|common|db|connectors|contracts|policy|activities|workflows|${API_ROOMS}|${SERVICES}`,
      'the eligibility registry client knows only its contract, which the sandbox emulates.',
    ),
    layer(
      'db',
      `starters|common|connectors|contracts|policy|activities|workflows|${API_ROOMS}|${SERVICES}`,
      'db knows only Postgres.',
    ),
    layer(
      'contracts',
      `starters|db|connectors|policy|activities|workflows|${API_ROOMS}|${SERVICES}`,
      'contracts say what the flows exchange; they do no I/O, so the workflow bundle can import them.',
    ),
    layer(
      'activities',
      `workflows|${API_ROOMS}|${SERVICES}`,
      'activities do the I/O a workflow asks for; they know no workflow code.',
      // A deposit's screening reserves its amount within the person's own limits, as the
      // customers' routes count them.
      '^customers/deposit-limits\\.ts$',
    ),
    layer(
      'workflows',
      `starters|db|connectors|policy|${API_ROOMS}|${SERVICES}`,
      'workflows are deterministic: no I/O module, no service.',
    ),
    layer(
      'http',
      `connectors|db|contracts|activities|workflows|starters|api-keys|customers|ingress|events|monitoring|backoffice|api|${SERVICES}`,
      'the HTTP plumbing (problems, hardening, observability, deadlines) serves every surface alike: it knows none of them, no flow and no table.',
    ),
    layer(
      'starters',
      `signed-requests|eligibility|db|connectors|policy|activities|workflows|${API_ROOMS}|${SERVICES}`,
      "the starters start flows for every surface alike: they answer typed outcomes, never a Problem or a request; they know no surface, no table, no provider, and no activity or workflow code (a flow's name and contract are enough to start it).",
    ),
    layer(
      'api-keys',
      `contracts|activities|workflows|customers|ingress|events|monitoring|backoffice|api|${SERVICES}`,
      'API keys are read by the backend API, the events routes, the back office and the CLI: none of them is known here.',
    ),
    layer(
      'customers',
      `activities|workflows|http|api-keys|ingress|events|monitoring|backoffice|api|${SERVICES}`,
      'what pixflow knows of a person, for every surface that shows or changes it: it knows none of them.',
    ),
    layer(
      'ingress',
      `activities|workflows|api-keys|events|monitoring|backoffice|api|${SERVICES}`,
      "the provider's webhook ingress stands beside the other surfaces: it imports none of them.",
    ),
    layer(
      'events',
      `activities|workflows|customers|ingress|monitoring|backoffice|api|${SERVICES}`,
      'the outbound events stand beside the other surfaces: they import none of them.',
    ),
    layer(
      'monitoring',
      `activities|workflows|http|api-keys|customers|ingress|events|backoffice|api|${SERVICES}`,
      'the alert monitor reads the outbox and writes alerts in Postgres: it knows no surface, no flow code.',
    ),
    layer(
      'backoffice',
      `activities|workflows|ingress|events|monitoring|api|${SERVICES}`,
      'the back office stands beside the other surfaces: it imports none of them, the backend API least.',
    ),
    layer('api', SERVICES, 'the API process is a service; it does not reach into the others.'),
    layer(
      'nexus',
      `api|activities|workflows|ingress|events|monitoring|backoffice|worker|sandbox|scripts|bench`,
      'the Nexus service starts flows as the backend API does (the same starters, the same rules); it knows no other surface (the backend API least), no workflow code, and no service.',
    ),
    layer(
      'worker',
      `${API_ROOMS}|sandbox|scripts|bench`,
      'the worker is a service; it does not reach into the others.',
    ),
    layer(
      'sandbox',
      `starters|contracts|activities|workflows|${API_ROOMS}|nexus|worker|db|scripts|bench`,
      "the sandbox stands in for the provider and the operator's services: it knows only their contracts.",
      // The operator's payout authorization is a contract of the withdrawal flow's; Pix key rules are Pix's.
      '^contracts/(payout-authorization|pix-key)\\.ts$',
    ),
    {
      name: 'clients: their own package',
      comment:
        "a client is a package of its own, built from the API's document: it imports nothing of pixflow's code.",
      severity: 'error',
      from: { path: '^clients/' },
      to: { path: `^(common|connectors|db|contracts|activities|workflows|${API_ROOMS}|${SERVICES})/` },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|test|\\.cache)' },
    parser: 'swc',
    tsPreCompilationDeps: true,
  },
};
