import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

// Custom search attributes every flow keeps current, so operators can filter in the Temporal UI,
// e.g. `PixflowType = "deposit" AND PixflowStatus = "awaiting_payment" AND PixflowMerchant = "m1"`.
export const FlowTypeKey = defineSearchAttributeKey('PixflowType', SearchAttributeType.KEYWORD);
export const FlowStatusKey = defineSearchAttributeKey('PixflowStatus', SearchAttributeType.KEYWORD);
/** Keyed hash of the CPF: lets an operator find a person's flows without the CPF in plain text. */
export const CpfHashKey = defineSearchAttributeKey('PixflowCpfHash', SearchAttributeType.KEYWORD);
export const CpfMaskedKey = defineSearchAttributeKey('PixflowCpfMasked', SearchAttributeType.KEYWORD);
export const AmountKey = defineSearchAttributeKey('PixflowAmountCentavos', SearchAttributeType.INT);
export const MerchantKey = defineSearchAttributeKey('PixflowMerchant', SearchAttributeType.KEYWORD);

export const searchAttributeKeys = [
  FlowTypeKey,
  FlowStatusKey,
  CpfHashKey,
  CpfMaskedKey,
  AmountKey,
  MerchantKey,
];

/** `temporal server start-dev --search-attribute Name=Type` arguments for the same keys. */
export function searchAttributeCliArgs(): string[] {
  const cliType: Record<string, string> = { KEYWORD: 'Keyword', INT: 'Int' };
  return searchAttributeKeys.flatMap((k) => ['--search-attribute', `${k.name}=${cliType[k.type] ?? k.type}`]);
}
