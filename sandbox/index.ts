export { createSandbox, type RunningSandbox, type StartSandboxOptions, startSandbox } from './app';
export type { SandboxOptions } from './context';
export { type Faults, type FaultsPatch, faultsPatchSchema } from './faults';
export { lookupTestDocument, testDocumentFor, testDocuments, testDocumentsMarkdown } from './test-documents';
