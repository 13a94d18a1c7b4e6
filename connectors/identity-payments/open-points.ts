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
  /** How the connector reads either side. */
  pixflow: string;
}

export const OPEN_POINTS = {
  'token.expires_in': {
    question: 'expires_in is an integer (the token response table)',
    doc: 'a JSON number, 3600',
    other: 'a string, "3600"',
    pixflow: 'reads a number or its digits; anything else is a contract error naming expires_in',
  },
  'token.errors': {
    question: 'responses to bad credentials and to the token rate limit: not shown',
    doc: '401 for bad credentials, 429 with Retry-After for the rate limit',
    other: '400 {"error":"invalid_client"} for bad credentials, 403 for the rate limit',
    pixflow:
      '401 and 400 invalid_client: the credentials were refused (retried, told once at warn); 429 and 403: rate limited, waits out Retry-After before asking for a token again',
  },
  'auth.header': {
    question:
      'KYC and liveness samples send the bare token, inquiries `Bearer`; whether both are accepted: not shown',
    doc: 'KYC and liveness take the bare token only, inquiries `Bearer` only',
    other: '`Bearer <token>` everywhere, the bare token refused with 401',
    pixflow:
      "starts with the document's form per endpoint, tries the other once on 401/403 and keeps the one that worked (PROVIDER_AUTH_HEADER fixes it); a refused token is replaced at most once",
  },
  'liveness.correlation': {
    question: 'the liveness request field is correlation_id in the sample, correlationId in the table',
    doc: 'correlation_id',
    other: 'correlationId; correlation_id refused with a 400 whose message is an array (NestJS style)',
    pixflow:
      'sends correlation_id; a 400 naming the field is asked again once with correlationId, which is then kept (PROVIDER_LIVENESS_ID_FIELD fixes it; a validation 400 is never a KYC outcome)',
  },
  'kyc.status': {
    question: 'KYC status words are lower case in /kyc, upper case in the liveness kyc object',
    doc: 'lower case (regular, suspenso, ...)',
    other: 'upper case (REGULAR, SUSPENSO, ...)',
    pixflow:
      'reads status words in any letter case; an answer without is_under_18 decides nothing (unclassified)',
  },
  'inquiry.status': {
    question: 'inquiry status: `completed` seen, other values not shown',
    doc: 'completed / processing / failed',
    other: 'Portuguese upper case: CONCLUIDA / ATIVA / REJEITADA',
    pixflow:
      'reads the word through connectors/status-words.ts; a word the table does not know is unclassified: the flow keeps waiting, an alert is raised',
  },
  'inquiry.empty': {
    question: 'payer fields and payedAt "may be empty"; one passage spells paidAt',
    doc: 'empty strings, payedAt',
    other: 'null for empty fields, paidAt, value as a decimal string',
    pixflow: '"", null and absent are all empty; payedAt or paidAt; value a number or its decimal text',
  },
  'withdraw.duplicate': {
    question: 'the answer to a repeated transactionId: not shown',
    doc: '409',
    other: '400',
    pixflow: '409 is a payout the provider holds; a 400 or 422 is looked up before it counts as refused',
  },
  'withdraw.create': {
    question: 'the withdrawal creation response body: not shown',
    doc: '201 with a JSON object, value a number',
    other: '200 with value as a decimal string and null e2eId',
    pixflow:
      'any 2xx takes the payout; a body it cannot read (or one saying responseStatus >= 300) is unclassified: the payout stays sending, looked up on the retry, never failed',
  },
  'receipt.content-type': {
    question: 'the receipt request is JSON or a form: both appear, which one is required: not shown',
    doc: 'JSON only (a form is refused with 415)',
    other: 'a form only (JSON is refused with 415)',
    pixflow: 'sends JSON, then a form once on 415 and keeps what worked (PROVIDER_RECEIPT_FORMAT fixes it)',
  },
  'receipt.status': {
    question: 'receipt status is an integer "or empty"; invoice and datetimepayed may be empty',
    doc: 'integer codes, "" when empty',
    other: 'codes as strings ("4"), null when empty',
    pixflow:
      'reads codes as numbers or text and empty fields as "", null or absent; a code outside 0-4 decides nothing and is told',
  },
} as const satisfies Record<string, OpenPoint>;

export type OpenPointId = keyof typeof OPEN_POINTS;
export const OPEN_POINT_IDS = Object.keys(OPEN_POINTS) as OpenPointId[];
export type Side = 'doc' | 'other';
