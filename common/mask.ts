// Masking of personal data for logs, UI summaries and search attributes. Pure functions: the
// workflows use them too.

/** ***.456.789-**: the middle six digits, as Brazilian receipts print a CPF. */
export function maskCpf(cpf: string): string {
  const d = cpf.replace(/\D/g, '');
  if (d.length !== 11) return '***';
  return `***.${d.slice(3, 6)}.${d.slice(6, 9)}-**`;
}

/** "Maria Silva" -> "M*** S***". */
export function maskName(name: string): string {
  return name
    .split(/\s+/)
    .filter(Boolean)
    .map((part) => `${part[0]}***`)
    .join(' ');
}

/** Replaces every CPF-looking run (formatted or not) in free text with its masked form. */
export function maskCpfsIn(text: string): string {
  return text.replace(/\d{3}\.?\d{3}\.?\d{3}-?\d{2}/g, (m) => maskCpf(m));
}

/** A Pix key as shown back: enough to recognise it, not enough to use it. */
export function maskPixKey(pixKey: string, pixType: string): string {
  switch (pixType) {
    case 'CPF':
      return maskCpf(pixKey);
    case 'EMAIL': {
      const [user = '', domain = ''] = pixKey.split('@');
      return `${user.slice(0, 1)}***@${domain}`;
    }
    case 'PHONE':
      return `${pixKey.slice(0, 5)}*****${pixKey.slice(-4)}`;
    case 'EVP':
      return `${pixKey.slice(0, 8)}-****-****-****-************`;
    default:
      return '***';
  }
}

/** A bank account as shown back: the bank (ISPB) and branch, and the account's last digits. */
export function maskBankAccount(ispb: string, branch: string, account: string): string {
  return `ispb ${ispb} branch ${branch} account ***${account.slice(-3)}`;
}
