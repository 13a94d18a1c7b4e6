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
