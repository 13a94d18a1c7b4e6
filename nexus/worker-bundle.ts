import type { interceptors } from './outcome-interceptor';

// What the worker's workflow bundle and data converter take so that what crosses Nexus needs no
// pixflow key (docs/nexus.md): the interceptor that gives each flow's result its outcome in the
// clear, and the payload converter that writes it so. Paths, resolved where this file is: the
// .ts files under tsx, the .js ones in the compiled image.

export type OutcomeInterceptors = typeof interceptors;

/** bundleWorkflowCode's options for the worker's bundle. */
export const nexusBundleOptions = () => ({
  workflowInterceptorModules: [require.resolve('./outcome-interceptor')],
  payloadConverterPath: require.resolve('../common/payload-converter'),
});
