import { envSchema } from '../../common/config';
import type { Policy } from '../../policy/schema';
import { policyFromConfig } from '../../policy/seed';

/** The policy an unconfigured deployment seeds as its first version. */
export const defaultPolicy = (): Policy => policyFromConfig(envSchema.parse({}));
