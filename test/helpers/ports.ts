export { freePort, tcpOpen } from '../../scripts/net';
