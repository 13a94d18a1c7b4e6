// The import rules of the tree, checked in CI (`npm run lint:deps`). Layers, lowest first:
//   provider, db  ->  common  ->  contracts  ->  activities, workflows  ->  api, worker, sandbox  ->  scripts, bench
// A module imports from its own folder and the layers below it, never from a layer above, and no
// two modules import each other, even through others or for types only.
const layer = (from, notTo, comment) => ({
  name: `layer: ${from}`,
  comment,
  severity: 'error',
  from: { path: `^${from}/` },
  to: { path: notTo },
});

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
      '^(db|contracts|activities|workflows|api|worker|sandbox|scripts|bench)/',
      'common serves every process: it knows no flow and no service.',
    ),
    layer(
      'provider',
      '^(common|db|contracts|activities|workflows|api|worker|sandbox|scripts|bench)/',
      'the provider client knows only the provider.',
    ),
    layer(
      'db',
      '^(common|provider|contracts|activities|workflows|api|worker|sandbox|scripts|bench)/',
      'db knows only Postgres.',
    ),
    layer(
      'contracts',
      '^(db|activities|workflows|api|worker|sandbox|scripts|bench)/',
      'contracts say what the flows exchange; they do no I/O, so the workflow bundle can import them.',
    ),
    layer(
      'activities',
      '^(workflows|api|worker|sandbox|scripts|bench)/',
      'activities do the I/O a workflow asks for; they know no workflow code.',
    ),
    layer(
      'workflows',
      '^(db|api|worker|sandbox|scripts|bench)/',
      'workflows are deterministic: no I/O module, no service.',
    ),
    layer(
      'api',
      '^(worker|sandbox|scripts|bench)/',
      'the API is a service; it does not reach into the others.',
    ),
    layer(
      'worker',
      '^(api|sandbox|scripts|bench)/',
      'the worker is a service; it does not reach into the others.',
    ),
    layer(
      'sandbox',
      '^(contracts|activities|workflows|api|worker|db|scripts|bench)/',
      'the sandbox stands in for the provider: it knows only the provider contract.',
    ),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|test|\\.cache)' },
    parser: 'swc',
    tsPreCompilationDeps: true,
  },
};
