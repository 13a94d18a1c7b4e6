export { freePort } from '../../scripts/embedded-stack';
