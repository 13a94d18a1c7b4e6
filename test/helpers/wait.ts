export { type WaitOptions, waitUntil } from '../../scripts/wait';
