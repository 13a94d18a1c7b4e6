export { type RunningSandbox, type StartSandboxOptions, startSandbox } from './app';
