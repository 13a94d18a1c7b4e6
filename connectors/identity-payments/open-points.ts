// The points shared/provider-api.md leaves open ("not shown", or two spellings), each with the two
// sides a provider may take. The sandbox answers the `doc` side by default and the `other` side
// under its dialect setting; the connector accepts both; `npm run conformance` tells which side a
// real provider takes. One list, so the three cannot drift apart.

export interface OpenPoint {
  /** What the document says, or leaves unsaid. */
  question: string;
  /** The sandbox's default answer. */
  doc: string;
  /** The other answer a provider may give. */
  other: string;
}

export const OPEN_POINTS = {
  'token.expires_in': {
    question: 'expires_in is an integer (the token response table)',
    doc: 'a JSON number, 3600',
    other: 'a string, "3600"',
  },
  'token.errors': {
    question: 'responses to bad credentials and to the token rate limit: not shown',
    doc: '401 for bad credentials, 429 with Retry-After for the rate limit',
    other: '400 {"error":"invalid_client"} for bad credentials, 403 for the rate limit',
  },
  'auth.header': {
    question:
      'KYC and liveness samples send the bare token, inquiries `Bearer`; whether both are accepted: not shown',
    doc: 'KYC and liveness take the bare token only, inquiries `Bearer` only',
    other: '`Bearer <token>` everywhere, the bare token refused with 401',
  },
  'liveness.correlation': {
    question: 'the liveness request field is correlation_id in the sample, correlationId in the table',
    doc: 'correlation_id',
    other: 'correlationId; correlation_id refused with a 400 whose message is an array (NestJS style)',
  },
  'kyc.status': {
    question: 'KYC status words are lower case in /kyc, upper case in the liveness kyc object',
    doc: 'lower case (regular, suspenso, ...)',
    other: 'upper case (REGULAR, SUSPENSO, ...)',
  },
  'inquiry.status': {
    question: 'inquiry status: `completed` seen, other values not shown',
    doc: 'completed / processing / failed',
    other: 'Portuguese upper case: CONCLUIDA / ATIVA / REJEITADA',
  },
  'inquiry.empty': {
    question: 'payer fields and payedAt "may be empty"; one passage spells paidAt',
    doc: 'empty strings, payedAt',
    other: 'null for empty fields, paidAt, value as a decimal string',
  },
  'withdraw.duplicate': {
    question: 'the answer to a repeated transactionId: not shown',
    doc: '409',
    other: '400',
  },
  'withdraw.create': {
    question: 'the withdrawal creation response body: not shown',
    doc: '201 with a JSON object, value a number',
    other: '200 with value as a decimal string and null e2eId',
  },
  'receipt.content-type': {
    question: 'the receipt request is JSON or a form: both appear, which one is required: not shown',
    doc: 'JSON only (a form is refused with 415)',
    other: 'a form only (JSON is refused with 415)',
  },
  'receipt.status': {
    question: 'receipt status is an integer "or empty"; invoice and datetimepayed may be empty',
    doc: 'integer codes, "" when empty',
    other: 'codes as strings ("4"), null when empty',
  },
} as const satisfies Record<string, OpenPoint>;

export type OpenPointId = keyof typeof OPEN_POINTS;
export const OPEN_POINT_IDS = Object.keys(OPEN_POINTS) as OpenPointId[];
export type Side = 'doc' | 'other';
