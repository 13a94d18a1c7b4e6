import express, { type ErrorRequestHandler, type RequestHandler, Router } from 'express';
import { z } from 'zod';
import {
  type components,
  createPixflowClient,
  dataOf,
  type PixflowClient,
  type PixflowEvent,
  PixflowProblem,
  verifyEvent,
} from '../src';

// An example backend on pixflow: a game that onboards its players, takes their deposits, pays
// their prizes, and learns what happened from pixflow's events, pushed to a webhook endpoint it
// registers and verified before it believes them. State is in memory: it is an example.

export interface ExampleBackendOptions {
  /** pixflow's API and the key this backend holds. */
  pixflowUrl: string;
  apiKey: string;
}

const playerSchema = z.object({ cpf: z.string(), name: z.string().min(1), email: z.string() });
const amountSchema = z.object({ amountCentavos: z.number().int().positive() });
/** The account the player pays from, which the rules ask an operator to collect: pixflow checks it. */
const depositSchema = amountSchema.extend({
  bankAccount: z.object({ ispb: z.string(), branch: z.string(), number: z.string() }).optional(),
});
type Player = z.infer<typeof playerSchema>;
type EventTypes = components['schemas']['WebhookEndpointCreate']['events'];

class UnknownPlayer extends Error {}

/** Where pixflow pushes events: each verified with the endpoint's secret, then kept once per id. */
function eventInbox() {
  /** The endpoint's signing secrets, newest first: the one before keeps signing while it overlaps. */
  const secrets: string[] = [];
  const events: PixflowEvent[] = [];
  let refused = 0;
  const receive: RequestHandler = (req, res) => {
    let event: PixflowEvent;
    try {
      event = verifyEvent(secrets, req.body as Buffer, req.headers);
    } catch {
      refused++;
      res.status(400).json({ error: 'not a verified pixflow event' });
      return;
    }
    // The same event may come again (a retry, a redelivery): its id says so.
    if (!events.some((e) => e.id === event.id)) events.push(event);
    res.status(204).end();
  };
  return { secrets, events, refused: () => refused, receive };
}

/** The game's players: sign-up (pixflow's onboarding), deposits and prizes. */
function playerRoutes(pixflow: PixflowClient) {
  const players = new Map<string, Player>();
  const playerOf = (cpf: string) => {
    const player = players.get(cpf);
    if (!player) throw new UnknownPlayer(cpf);
    return player;
  };
  /** The player as pixflow's deposits and withdrawals name their client. */
  const client = (p: Player) => ({ externalId: `player-${p.cpf}`, cpf: p.cpf, email: p.email, name: p.name });
  const r = Router();

  // Sign-up: the onboarding, and the liveness link to hand the player.
  r.post('/players', async (req, res) => {
    const player = playerSchema.parse(req.body);
    players.set(player.cpf, player);
    const body = { cpf: player.cpf, plan: 'plan_basic' as const, event: 'signup' };
    const onboarding = await dataOf(pixflow.POST('/v1/onboardings', { body }));
    const path = { cpf: player.cpf };
    const link = await dataOf(pixflow.POST('/v1/onboardings/{cpf}/liveness-link', { params: { path } }));
    res.status(201).json({ status: onboarding.state.status, livenessUrl: link.url });
  });

  r.get('/players/:cpf', async (req, res) => {
    const path = { cpf: playerOf(req.params.cpf).cpf };
    const onboarding = await dataOf(pixflow.GET('/v1/onboardings/{cpf}', { params: { path } }));
    res.json({ status: onboarding.state.status });
  });

  // A deposit: the Pix code the player pays, from the bank account they name. The client gives it its txid.
  r.post('/players/:cpf/deposits', async (req, res) => {
    const { amountCentavos, bankAccount } = depositSchema.parse(req.body);
    const body = { amountCentavos, client: { ...client(playerOf(req.params.cpf)), bankAccount } };
    const deposit = await dataOf(pixflow.POST('/v1/deposits', { body }));
    res.status(201).json({ txid: deposit.txid, pixCode: deposit.payload });
  });

  // A prize: a payout to the player's own CPF Pix key. The client gives it its transactionId.
  r.post('/players/:cpf/prizes', async (req, res) => {
    const { amountCentavos } = amountSchema.parse(req.body);
    const player = playerOf(req.params.cpf);
    const body = { amountCentavos, pixKey: player.cpf, pixType: 'CPF' as const, client: client(player) };
    const payout = await dataOf(pixflow.POST('/v1/withdrawals', { body }));
    res.status(201).json({ transactionId: payout.transactionId, status: payout.state.status });
  });
  return r;
}

const answerErrors: ErrorRequestHandler = (err, _req, res, _next) => {
  if (err instanceof UnknownPlayer) {
    res.status(404).json({ error: 'no such player' });
  } else if (err instanceof PixflowProblem) {
    // pixflow's refusal, passed on with the fields it names.
    res.status(err.status).json({ error: err.message, fields: err.fieldErrors });
  } else if (err instanceof z.ZodError) {
    res.status(400).json({ error: 'invalid request', fields: err.issues.map((i) => i.path.join('.')) });
  } else {
    res.status(500).json({ error: 'internal error' });
  }
};

export function createExampleBackend({ pixflowUrl, apiKey }: ExampleBackendOptions) {
  const pixflow = createPixflowClient({ baseUrl: pixflowUrl, apiKey });
  const inbox = eventInbox();
  const app = express();
  // The raw body: the signature is over the bytes as sent.
  app.post('/webhooks/pixflow', express.raw({ type: 'application/json' }), inbox.receive);
  app.use(express.json());
  app.use(playerRoutes(pixflow));
  app.get('/events', (_req, res) => {
    res.json({ events: inbox.events, refused: inbox.refused() });
  });
  app.use(answerErrors);

  return {
    app,
    /** Subscribes `url` (this backend's /webhooks/pixflow as pixflow reaches it) to these events. */
    async subscribe(url: string, events: EventTypes) {
      const endpoint = await dataOf(pixflow.POST('/v1/webhook-endpoints', { body: { url, events } }));
      inbox.secrets.unshift(endpoint.secret);
      return endpoint.id;
    },
  };
}
