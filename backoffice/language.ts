import { Router } from 'express';
import { z } from 'zod';
import { setOperatorLanguage } from '../db/operators';
import type { Pool } from '../db/pool';
import { parseForm, say } from './forms';
import { languages } from './i18n';
import { operatorOf, redirectSaved, wordsOf } from './render';
import { safeNext } from './sign-in';

// The language switch in every page's header. A signed-in operator's choice is kept with them
// (operators.language), so it follows them to any browser; before signing in it lasts the
// session, over what the browser asks for (Accept-Language).

const languageFormSchema = z.object({
  language: z.enum(languages, { error: say('oneOf', languages.join(', ')) }),
  next: z.string().optional(),
});

export function languageRoutes(pool: Pool) {
  const r = Router();
  r.post('/language', async (req, res) => {
    const { language, next } = parseForm(languageFormSchema, req.body, '/backoffice', wordsOf(req, res));
    const operator = operatorOf(res);
    if (operator) await setOperatorLanguage(pool, operator.id, language);
    else req.session.language = language;
    await redirectSaved(req, res, safeNext(next));
  });
  return r;
}
