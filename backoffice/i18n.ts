// Over 400 lines on purpose: the whole catalog, pt-BR then English with the same keys, in one
// file so that a translator reads both side by side and the compiler checks they match.
import type { KeyStatus } from '../api-keys/admin';
import type { BiometricsStatus } from '../contracts/biometrics';
import type { accountKinds, CustomerVerification } from '../contracts/customer';
import type { DepositStatus } from '../contracts/deposit';
import type { FlowType } from '../contracts/flow';
import type { OnboardingStatus } from '../contracts/onboarding';
import {
  biometricsReasons,
  depositReasons,
  IMPEDED_PREFIX,
  INVALID_PIX_KEY,
  KYC_STATUS_PREFIX,
  kycReasons,
  type kycRegistryStatuses,
  LIVENESS_REFUSED_PREFIX,
  onboardingReasons,
  PAYOUT_REJECTED_REASON,
  PROVIDER_CONTRADICTS,
  withdrawalReasons,
} from '../contracts/reasons';
import type { WithdrawalStatus } from '../contracts/withdrawal';
import type { QueueId } from '../db/backoffice-queues';
import type { ActionOutcome, AuditReason, OperatorActionName } from '../db/operator-actions';
import { type OperatorLanguage, type OperatorRole, operatorLanguages } from '../db/operators';
import type { ImpededReason } from '../eligibility/contract';
import { type ProviderErrorCode, providerErrorCodes } from '../provider/errors';
import type { StatusVerification } from '../provider/schemas';

// Every word the back office shows, in each language it speaks: Brazilian Portuguese (the
// default) and English. Codes (statuses, reasons, actions) are never shown raw: each has a label
// here, and test/unit/backoffice-i18n.test.ts fails for a code of the contracts without one.
// Free text (a reason an operator typed, the provider's own words) is shown as written.

export const languages = operatorLanguages;
export type Language = OperatorLanguage;
export const DEFAULT_LANGUAGE: Language = 'pt-BR';

export const isLanguage = (v: unknown): v is Language => (languages as readonly unknown[]).includes(v);

/** The reason codes with a label of their own (the families are put together in reasonLabel). */
export const reasonCodes = [
  ...kycReasons,
  ...onboardingReasons,
  ...depositReasons,
  ...withdrawalReasons,
  ...biometricsReasons,
] as const;
export type ReasonCode = (typeof reasonCodes)[number];

type RegistryStatus = (typeof kycRegistryStatuses)[number];
type AccountKind = (typeof accountKinds)[number];

/** What every language must label: one entry per code, checked by the compiler and the test. */
interface Labels {
  flowType: Record<FlowType, string>;
  status: {
    onboarding: Record<OnboardingStatus, string>;
    deposit: Record<DepositStatus, string>;
    withdrawal: Record<WithdrawalStatus, string>;
    biometrics: Record<BiometricsStatus, string>;
  };
  verification: Record<CustomerVerification, string>;
  reason: Record<ReasonCode, string>;
  registryStatus: Record<RegistryStatus | 'null', string>;
  liveness: Record<StatusVerification, string>;
  providerError: Record<ProviderErrorCode, string>;
  action: Record<OperatorActionName, string>;
  outcome: Record<ActionOutcome, string>;
  auditReason: Record<AuditReason, string>;
  role: Record<OperatorRole, string>;
  keyStatus: Record<KeyStatus, string>;
  accountKind: Record<AccountKind, string>;
  accountSource: Record<'deposit' | 'api', string>;
  decision: Record<'approve' | 'refuse' | 'accept' | 'return', string>;
  queue: Record<QueueId, { title: string; help: string }>;
  languageName: Record<Language, string>;
}

const ptBR = {
  lang: 'pt-BR' as Language,
  /** Intl's locale for dates and numbers. */
  intl: 'pt-BR',
  product: 'back office do pixflow',
  brand: 'back office',
  skip: 'Pular para o conteúdo',
  nav: {
    label: 'Principal',
    queues: 'Filas',
    search: 'Buscar',
    audit: 'Auditoria',
    apiKeys: 'Chaves de API',
    breadcrumb: 'Trilha',
  },
  signOut: 'Sair',
  languageSwitch: 'Idioma das páginas',
  footer: {
    zone: (zone: string) => `Horários em ${zone}.`,
    money: 'Valores em R$.',
  },
  yes: 'sim',
  no: 'não',
  unknown: 'desconhecido',
  none: 'nenhum',
  never: 'nunca',
  dash: '—',
  back: 'Voltar',
  nothingChanged: 'Nada foi alterado.',
  dayHint: 'dd/mm/aaaa',
  signIn: {
    title: 'Entrar',
    email: 'E-mail',
    password: 'Senha',
    submit: 'Entrar',
    wrong: 'E-mail ou senha incorretos.',
    tooMany: 'Muitas tentativas de entrada a partir daqui. Aguarde 15 minutos e tente de novo.',
  },
  home: {
    title: 'Filas',
    caption: 'Casos abertos por fila',
    queue: 'Fila',
    cases: 'Casos',
    oldest: 'Mais antigo esperando',
    findCustomer: 'Encontrar um cliente pelo CPF',
    findCustomerButton: 'Abrir cliente',
    findCase: 'Encontrar um caso pelo txid, transactionId ou E2E',
    findCaseButton: 'Buscar caso',
  },
  queue: {
    cpf: 'CPF',
    since: 'Esperando desde (de)',
    until: 'Esperando desde (até)',
    type: 'Tipo',
    allTypes: 'Depósitos e saques',
    deposits: 'Depósitos',
    withdrawals: 'Saques',
    filter: 'Filtrar',
    count: (total: number, shown: number) =>
      `${total} ${total === 1 ? 'caso' : 'casos'}${total > shown ? `, os ${shown} mais antigos mostrados` : ''}.`,
    caption: (title: string) => `${title}, mais antigos primeiro`,
    case: 'Caso',
    customer: 'Cliente',
    amount: 'Valor',
    waiting: 'Esperando',
    details: 'Detalhes',
    someone: 'cliente',
    empty: 'Nada espera aqui.',
    detail: {
      kyc: (status: string) => `situação cadastral ${status}`,
      pep: 'PEP',
      liveness: (status: string) => `prova de vida: ${status}`,
      payer: (name: string) => `pagador ${name}`,
      payerCpf: (cpf: string) => `CPF ${cpf}`,
    },
  },
  flow: {
    status: 'Situação',
    since: 'desde',
    facts: 'Dados',
    customer: 'Cliente',
    amount: 'Valor',
    started: 'Início',
    workflow: 'Workflow',
    inTemporal: (id: string) => `${id} na Temporal UI`,
    id: {
      onboarding: 'Identificador',
      deposit: 'txid',
      withdrawal: 'transactionId',
      biometrics: 'Identificador',
    },
    kyc: 'Situação cadastral (KYC)',
    pep: 'Pessoa politicamente exposta (PEP)',
    liveness: 'Prova de vida',
    noLivenessYet: 'sem resposta ainda',
    reasons: 'Motivos',
    review: 'Revisão',
    merchant: 'Estabelecimento',
    paidBy: 'Pago por',
    payerIsCustomer: 'O pagador é o cliente',
    e2eId: 'ID fim a fim (E2E)',
    resolution: 'Resolução',
    reason: 'Motivo',
    decidedBy: (decision: string, by: string, reason: string) => `${decision} por ${by}: ${reason}`,
    decision: 'Decisão',
    noDecision: 'Nenhuma decisão está aberta neste caso.',
    mayNotDecide: (role: string) => `Seu papel (${role}) pode ver este caso, mas não decidi-lo.`,
    reviewQuestion: 'Aprovar esta pessoa?',
    approveChoice: 'Aprovar: ela poderá movimentar dinheiro',
    refuseChoice: 'Recusar: o cadastro é recusado',
    resolutionQuestion: 'Creditar este depósito?',
    acceptChoice: 'Aceitar: creditar o cliente',
    returnChoice: 'Devolver: mandar o dinheiro de volta ao pagador',
    reasonLabel: 'Motivo',
    reasonHelp: 'Fica na trilha de auditoria com o seu nome.',
    record: 'Registrar decisão',
    timeline: 'Linha do tempo',
    audit: 'Trilha de auditoria deste caso',
    exportCase: 'Exportar como CSV',
    recorded: {
      approve: (status: string) => `Registrado: aprovado. O cadastro está ${status}.`,
      refuse: (status: string) => `Registrado: recusado. O cadastro está ${status}.`,
      accept: (status: string) => `Registrado: aceito. O depósito está ${status}.`,
      return: (status: string) => `Registrado: a devolver. O depósito está ${status}.`,
    },
  },
  timeline: {
    empty: 'Nada registrado ainda.',
    verificationUpdated: 'Cliente: verificação alterada',
    impeded: 'Cliente: impedido de apostar',
    closed: 'Cliente: conta encerrada',
    endpointDisabled: 'Endpoint de webhook desativado',
    deadlineAtRisk: 'Saque: prazo de pagamento em risco',
    deadlineMissed: 'Saque: prazo de pagamento perdido',
  },
  customer: {
    title: (cpf: string) => `Cliente ${cpf}`,
    verification: 'Verificação',
    since: 'desde',
    kyc: 'Cadastro (KYC)',
    name: 'Nome',
    registry: 'Situação cadastral',
    notRead: 'não consultada',
    pep: 'Pessoa politicamente exposta (PEP)',
    under18: 'Menor de 18 anos',
    deceased: 'Falecido',
    restricted: 'Em lista restritiva',
    read: 'Consultado em',
    suspended: 'Suspenso',
    payoutsToday: (day: string) => `Saques de hoje, ${day}`,
    sent: 'Enviados ou em andamento',
    sentAmount: (amount: string, n: number) => `${amount} em ${n} ${n === 1 ? 'saque' : 'saques'}`,
    dailyLimit: 'Limite diário',
    left: 'Disponível hoje',
    lastBiometric: 'Última biometria',
    depositLimits: 'Limites de depósito definidos pela pessoa',
    depositPeriod: { daily: 'Diário', weekly: 'Semanal', monthly: 'Mensal' },
    noLimit: 'sem limite',
    depositLeft: (limit: string, left: string) => `${limit}, ${left} disponível`,
    pendingLimit: (limit: string, at: string) => ` (${limit} a partir de ${at})`,
    accounts: 'Contas cadastradas',
    pixKey: (type: string) => `chave Pix ${type}`,
    account: (masked: string, kind: string, source: string, at: string) =>
      `${masked} (${kind}, ${source}, ${at})`,
    noneYet: 'Nenhuma.',
    flows: 'Fluxos',
    flowsCaption: 'Os fluxos do cliente, mais recentes primeiro',
    flow: 'Fluxo',
    status: 'Situação',
    amount: 'Valor',
    started: 'Início',
    timeline: 'Linha do tempo',
    audit: 'Ações de operadores nos casos deste cliente',
  },
  impeded: {
    heading: 'Impedimento (cadastro de impedidos)',
    reason: 'Motivo',
    since: 'Desde',
    until: 'Até',
    noEnd: 'sem data de fim',
    source: 'Encontrado por',
    source_: {
      'registry:deposit': 'consulta antes de um depósito',
      'registry:onboarding': 'consulta no cadastro',
      'registry:rescreening': 'reconsulta periódica',
    } as Record<string, string>,
    registryNow: 'Última resposta do cadastro',
    registryAnswer: { eligible: 'apto', impeded: 'impedido' } as Record<string, string>,
    /** An audit row's before and after. */
    state: { impeded: 'Impedido', closed: 'Conta encerrada', eligible: 'Apto' } as Record<string, string>,
    closeBy: 'Encerrar até',
    left: (left: string) => `faltam ${left}`,
    overdue: (late: string) => `prazo vencido há ${late}`,
    closed: 'Conta encerrada',
    closedBy: (at: string, by: string, reason: string) => `${at}, por ${by}: ${reason}`,
    none: 'O cadastro de impedidos não nomeia esta pessoa.',
    closeQuestion: 'Encerrar a conta desta pessoa?',
    closeHelp:
      'Nenhum depósito é aceito; o saldo continua podendo ser sacado para a conta da própria pessoa.',
    close: 'Encerrar conta',
    reinstateQuestion: 'Retirar o impedimento?',
    reinstateHelp:
      'Só quando a última resposta do cadastro diz que a pessoa está apta: ela volta a poder depositar.',
    reinstate: 'Retirar impedimento',
    mayNotDecide: (role: string) =>
      `Seu papel (${role}) pode ver este cliente, mas não encerrar a conta nem retirar o impedimento.`,
    closedDone: 'Registrado: a conta está encerrada.',
    reinstatedDone: 'Registrado: o impedimento foi retirado; a pessoa pode voltar a depositar.',
    notOpen: 'Nada a encerrar',
    notOpenText: 'Esta pessoa não está impedida, ou a conta já foi encerrada. Nada foi alterado.',
    stillImpeded: 'Ainda impedido',
    stillImpededText:
      'A última resposta do cadastro de impedidos ainda nomeia esta pessoa (ou esta pessoa não está impedida). O impedimento fica; nada foi alterado.',
    caption: 'Clientes impedidos, os de menos tempo para encerrar primeiro',
    customer: 'Cliente',
    count: (total: number, shown: number) =>
      `${total} ${total === 1 ? 'pessoa' : 'pessoas'}${total > shown ? `, as ${shown} de menos tempo mostradas` : ''}.`,
  },
  audit: {
    title: 'Trilha de auditoria',
    intro: 'Toda ação de operador, mais recentes primeiro. Linhas só são acrescentadas, nunca alteradas.',
    filters: 'Filtros',
    who: 'Quem (e-mail do operador)',
    action: 'Ação',
    anyAction: 'Todas as ações',
    outcome: 'Resultado',
    anyOutcome: 'Todos os resultados',
    case: 'Caso (id do fluxo, txid ou transactionId)',
    from: 'De',
    to: 'Até',
    size: 'Por página',
    filter: 'Filtrar',
    clear: 'Limpar filtros',
    shown: (n: number) => `${n} ${n === 1 ? 'ação mostrada' : 'ações mostradas'}.`,
    paging: 'Páginas da trilha',
    newest: 'Mais recentes',
    newer: '← Mais novas',
    older: 'Mais antigas →',
    export: 'Exportar estas como CSV',
    exportAll: 'Exportar tudo como CSV',
    caption: 'Ações de operadores, mais recentes primeiro',
    when: 'Quando',
    whoColumn: 'Quem',
    actionColumn: 'Ação',
    outcomeColumn: 'Resultado',
    caseColumn: 'Caso',
    change: 'Antes → depois',
    reason: 'Motivo',
    empty: 'Nenhuma ação de operador ainda.',
    emptyFiltered: 'Nenhuma ação com estes filtros.',
  },
  search: {
    title: 'Buscar um caso',
    intro:
      'Pelo txid de um depósito, pelo transactionId de um saque, pelo ID fim a fim (E2E) de um pagamento ou pelo id do workflow.',
    label: 'txid, transactionId, E2E ou id do workflow',
    submit: 'Buscar caso',
    none: (q: string) => `Nenhum caso encontrado para “${q}”.`,
    many: (q: string) => `Mais de um caso para “${q}”:`,
    caption: 'Casos encontrados, mais recentes primeiro',
    case: 'Caso',
    status: 'Situação',
    amount: 'Valor',
    started: 'Início',
  },
  keys: {
    title: 'Chaves de API',
    intro:
      'As chaves com que os backends chamam /v1. Cada uma tem escopos (um escopo de escrita inclui o de leitura); a API aplica uma mudança em segundos, sem reiniciar. Segredos aparecem uma vez, quando criados, e ficam guardados só como hash.',
    bootstrap: (n: number) =>
      ` Além destas, ${n === 1 ? '1 chave' : `${n} chaves`} de API_KEYS ${n === 1 ? 'tem' : 'têm'} todos os escopos; ${n === 1 ? 'mude-a' : 'mude-as'} na configuração.`,
    caption: 'Chaves de API, mais recentes primeiro',
    name: 'Nome',
    key: 'Chave',
    scopes: 'Escopos',
    status: 'Situação',
    created: 'Criada',
    lastUsed: 'Último uso',
    expires: 'Expira',
    change: 'Alterar',
    previousUntil: (at: string) => `segredo anterior até ${at}`,
    overlap: 'O segredo antigo continua valendo',
    overlapNo: 'não',
    overlap1h: '1 hora',
    overlap24h: '24 horas',
    rotate: 'Rotacionar',
    rotateLabel: (name: string) => `Rotacionar ${name}`,
    revoke: 'Revogar',
    revokeLabel: (name: string) => `Revogar ${name}`,
    empty: 'Nenhuma chave de API ainda.',
    new: 'Nova chave de API',
    nameHelp: 'Quem ou o que a usa, por exemplo “Backend do checkout”.',
    scopeNone: 'nenhum',
    scopeRead: 'leitura',
    scopeWrite: 'escrita (e leitura)',
    expiresLabel: 'Expira',
    expiresNever: 'nunca',
    expiresIn: (days: number) => `em ${days} dias`,
    create: 'Criar chave',
    mayNotChange: (role: string) =>
      `Seu papel (${role}) pode ver as chaves de API; um administrador as cria, rotaciona e revoga.`,
    secretNote:
      'Copie a chave agora: ela aparece só esta vez e fica guardada apenas como hash. Entregue-a ao backend como',
    secretLabel: (id: string) => `Chave de API ${id}`,
    backToKeys: 'Voltar às chaves de API',
    created_: (name: string) => `Chave de API “${name}” criada`,
    rotated: (name: string) => `Chave de API “${name}” rotacionada`,
    revokedFlash: (name: string, id: string) =>
      `“${name}” (${id}) revogada; a API passa a recusá-la em segundos.`,
  },
  errors: {
    notFound: 'Não encontrado',
    notFoundText: (what: string) => `Não há ${what}. Pode ter sido digitado errado.`,
    what: {
      flow: 'fluxo com este id',
      queue: (name: string) => `fila chamada “${name}”`,
      customer: 'cliente com este CPF',
      apiKey: 'chave de API com este id',
      flowOfType: (type: string) => `${type} com este id`,
      page: (path: string) => `página em ${path}`,
    },
    notAllowed: 'Não permitido',
    mayNotDecide: (role: string) => `Seu papel (${role}) pode ver casos, mas não decidi-los.`,
    mayNotChangeKeys: (role: string) => `Seu papel (${role}) pode ver as chaves de API, mas não alterá-las.`,
    alreadyDecided: 'Já decidido',
    alreadyDecidedText: (now: string) =>
      `Alguém decidiu este caso antes: ele está ${now}. Sua decisão não foi enviada.`,
    notRotated: 'Não rotacionada',
    notRotatedText: 'Não há chave de API ativa com este id.',
    notRevoked: 'Não revogada',
    notRevokedText: 'Esta chave de API já foi revogada.',
    formExpired: 'Formulário expirado',
    formExpiredText:
      'Este formulário não foi enviado de uma página deste back office, ou sua sessão mudou desde que ele apareceu. Recarregue a página e tente de novo.',
    signedOut: 'Sessão encerrada',
    signedOutText: 'Sua sessão terminou. Entre de novo; nada foi alterado.',
    unavailable: 'O Temporal não está respondendo',
    unavailableText:
      'O pixflow não alcançou o fluxo a tempo. Recarregue o caso em instantes: uma decisão que você enviou pode ter sido registrada.',
    failed: 'Algo deu errado',
    failedText: 'O pixflow não conseguiu responder; tente de novo em instantes.',
    refused: 'Pedido recusado',
    refusedText: 'O pedido não pôde ser lido.',
    tooLarge: 'O formulário enviado é grande demais.',
    unstorable: 'Algo enviado não pode ser guardado nem lido como texto.',
    unstorableField: 'contém um caractere NUL, um surrogate isolado ou codificação percentual quebrada',
    formRefused: 'Formulário não aceito',
    filterRefused: 'Filtro não aceito',
    fieldsText: 'Alguns campos precisam de outra olhada.',
  },
  /** What a form field is called on the page it belongs to, for the refusal that names it. */
  fields: {
    form: 'formulário',
    path: 'endereço',
    cpf: 'CPF',
    since: 'Esperando desde (de)',
    until: 'Esperando desde (até)',
    type: 'Tipo',
    decision: 'Decisão',
    reason: 'Motivo',
    who: 'Quem',
    action: 'Ação',
    outcome: 'Resultado',
    case: 'Caso',
    from: 'De',
    to: 'Até',
    size: 'Por página',
    before: 'Página (antes de)',
    after: 'Página (depois de)',
    q: 'Busca',
    language: 'Idioma',
    name: 'Nome',
    scopes: 'Escopos',
    expires: 'Expira',
    overlap: 'O segredo antigo continua valendo',
  } as Record<string, string>,
  /** The refusals of the back office's own form rules (forms.ts `say`). */
  formErrors: {
    required: 'é obrigatório',
    cpf: 'deve ser um CPF: 11 dígitos, com os verificadores certos',
    atMost: (n: string) => `deve ter no máximo ${n} caracteres`,
    day: 'deve ser uma data dd/mm/aaaa',
    calendarDay: 'não é um dia do calendário',
    untilBeforeFrom: 'não pode ser antes do início',
    oneOf: (choices: string) => `deve ser ${choices}`,
    pageSize: 'deve ser 20, 50, 100 ou 200',
    cursor: 'deve ser o número de uma linha da trilha',
    oneCursor: 'use só uma página, a de antes ou a de depois',
    mustSayWhy: 'diga o porquê',
    decisionReview: 'deve ser aprovar ou recusar',
    decisionResolution: 'deve ser aceitar ou devolver',
    scopeLevel: 'deve ser nenhum, leitura ou escrita',
    oneScope: 'dê à chave pelo menos um escopo',
    expiry: 'deve ser nunca, 30, 90 ou 365 dias',
    overlap: 'deve ser não, 1 hora ou 24 horas',
    text: 'deve ser um texto',
    id: 'deve ser um id: letras, dígitos e sinais, sem espaços',
    invalid: 'valor não aceito',
  },
  labels: {
    flowType: { onboarding: 'Cadastro', deposit: 'Depósito', withdrawal: 'Saque', biometrics: 'Biometria' },
    status: {
      onboarding: {
        kyc: 'Consultando o cadastro (KYC)',
        awaiting_liveness: 'Aguardando prova de vida',
        awaiting_review: 'Aguardando revisão',
        approved: 'Aprovado',
        rejected: 'Recusado',
        expired: 'Expirado',
      },
      deposit: {
        creating: 'Criando QR Code',
        awaiting_payment: 'Aguardando pagamento',
        held: 'Retido',
        completed: 'Concluído',
        expired: 'Expirado',
        failed: 'Falhou',
        to_return: 'A devolver',
      },
      withdrawal: {
        validating: 'Validando',
        awaiting_biometrics: 'Aguardando biometria',
        awaiting_approval: 'Aguardando aprovação',
        sending: 'Enviando',
        processing: 'Em processamento',
        completed: 'Concluído',
        failed: 'Falhou',
        stuck: 'Sem desfecho (conciliação desistiu)',
        refused: 'Recusado',
      },
      biometrics: {
        issuing_link: 'Gerando link',
        awaiting_identification: 'Aguardando identificação',
        passed: 'Aprovada',
        failed: 'Reprovada',
        expired: 'Expirada',
        unavailable: 'Indisponível',
      },
    },
    verification: {
      none: 'Nenhuma',
      pending: 'Pendente',
      approved: 'Aprovada',
      rejected: 'Recusada',
      expired: 'Expirada',
      suspended: 'Suspensa',
    },
    reason: {
      invalid_document: 'CPF inválido',
      restricted_document: 'CPF em lista restritiva',
      document_not_found: 'CPF não encontrado no cadastro',
      deceased_or_under_age: 'Titular falecido ou menor de idade',
      under_18: 'Menor de 18 anos',
      deceased: 'Titular falecido',
      liveness_failed: 'Prova de vida reprovada',
      liveness_refused: 'Prova de vida recusada',
      review_approved: 'Aprovado na revisão de um operador',
      review_refused: 'Recusado na revisão de um operador',
      deadline_passed: 'Prazo do cadastro esgotado',
      third_party_payer: 'Pago por terceiro (o CPF do pagador não é o do cliente)',
      qr_expired_unpaid: 'QR Code expirou sem pagamento',
      provider_unavailable: 'Provedor indisponível',
      not_verified: 'Cliente não verificado',
      payee_not_owner: 'A conta de destino não é do cliente',
      limit_exceeded: 'Limite diário excedido',
      biometrics_failed: 'Biometria reprovada',
      biometrics_timeout: 'Biometria não concluída a tempo',
      biometrics_unavailable: 'Biometria indisponível',
      operator_refused: 'Recusado por um operador',
      authorization_denied: 'Negado pela autorização do operador',
      authorization_unavailable: 'Autorização do operador sem resposta',
      amount_above_step_up: 'Valor acima do limite que pede biometria',
      first_payout_to_account: 'Primeiro pagamento para esta conta',
      provider_reported_failure: 'O provedor informou falha',
      no_final_outcome_before_deadline: 'Sem desfecho do provedor até o prazo',
      not_onboarded_at_provider: 'Cliente sem cadastro no provedor',
    },
    registryStatus: {
      regular: 'Regular',
      pendente_regularizacao: 'Pendente de regularização',
      suspenso: 'Suspenso',
      cancelado: 'Cancelado',
      titularfalecido: 'Titular falecido',
      consta_lista_restritiva: 'Consta em lista restritiva',
      null: 'sem situação',
    },
    liveness: {
      requested: 'Solicitada',
      processing: 'Em processamento',
      completed: 'Concluída',
      failed: 'Reprovada',
      manual_approve_pending: 'Aguardando revisão manual',
      manual_approved: 'Aprovada na revisão manual',
      manual_refused: 'Recusada na revisão manual',
    },
    providerError: {
      INVALID_DOCUMENT: 'CPF inválido',
      RESTRICT_DOCUMENT: 'CPF em lista restritiva',
      DOCUMENT_NOT_FOUND: 'CPF não encontrado',
      DECEASED_OR_UNDER_AGE: 'Titular falecido ou menor de idade',
      NOT_FOUND: 'Não encontrado no provedor',
      UNAUTHORIZED: 'Credenciais recusadas pelo provedor',
      RATE_LIMITED: 'Limite de chamadas do provedor',
      PROVIDER_UNAVAILABLE: 'Provedor indisponível',
      DUPLICATE_TRANSACTION: 'Transação repetida no provedor',
      CONTRACT_VIOLATION: 'Resposta do provedor fora do contrato',
      BAD_REQUEST: 'Pedido recusado pelo provedor',
    },
    action: {
      sign_in: 'Entrada',
      sign_out: 'Saída',
      'onboarding.review': 'Revisão de cadastro',
      'onboarding.approve': 'Cadastro aprovado',
      'onboarding.refuse': 'Cadastro recusado',
      'deposit.resolution': 'Resolução de depósito',
      'deposit.accept': 'Depósito aceito',
      'deposit.return': 'Depósito a devolver',
      'audit.export': 'Exportação da auditoria',
      'api_key.create': 'Chave de API criada',
      'api_key.rotate': 'Chave de API rotacionada',
      'api_key.revoke': 'Chave de API revogada',
      'customer.close': 'Conta de impedido encerrada',
      'customer.reinstate': 'Impedimento retirado',
      'withdrawal.decision': 'Decisão sobre pagamento',
      'withdrawal.approve': 'Pagamento aprovado',
      'withdrawal.refuse': 'Pagamento recusado',
    },
    outcome: { done: 'Feito', refused: 'Recusado', conflict: 'Conflito', failed: 'Falhou' },
    auditReason: { sign_in_rate_limited: 'Muitas tentativas de entrada deste endereço' },
    role: { viewer: 'Leitor', reviewer: 'Revisor', approver: 'Aprovador', admin: 'Administrador' },
    keyStatus: { active: 'Ativa', expired: 'Expirada', revoked: 'Revogada' },
    accountKind: { pix_key: 'chave Pix', bank_account: 'conta bancária' },
    accountSource: { deposit: 'de um depósito', api: 'pela API' },
    decision: { approve: 'aprovação', refuse: 'recusa', accept: 'aceite', return: 'devolução' },
    queue: {
      'onboardings-awaiting-review': {
        title: 'Cadastros aguardando revisão',
        help: 'O KYC passou e a prova de vida pede uma pessoa: aprove ou recuse cada um.',
      },
      'deposits-held': {
        title: 'Depósitos retidos por pagador terceiro',
        help: 'Pagos por alguém que não é o cliente: aceite para creditar ou devolva ao pagador.',
      },
      'withdrawals-awaiting-biometrics': {
        title: 'Saques aguardando biometria',
        help: 'Saques grandes ou primeiros pagamentos esperam o cliente passar na biometria; nada a decidir aqui, mas os antigos podem pedir um contato.',
      },
      failed: {
        title: 'Depósitos e saques que falharam',
        help: 'O provedor recusou ou falhou estes. Nenhum dinheiro se moveu; o cliente pode precisar ser avisado.',
      },
      'customers-impeded': {
        title: 'Clientes impedidos',
        help: 'O cadastro de impedidos (SIGAP) nomeia estas pessoas: nenhum depósito é aceito, o saldo pode ser sacado para a conta da própria pessoa. Encerre cada conta até o prazo; os de menos tempo restante primeiro.',
      },
      'reconciliation-gave-up': {
        title: 'Conciliação desistiu',
        help: 'Pagamentos cujo desfecho o provedor nunca informou e que nenhuma consulta achou até o prazo. Confira com o provedor antes de pagar de novo.',
      },
      'payouts-awaiting-approval': {
        title: 'Pagamentos aguardando aprovação',
        help: 'Saques acima do valor que pede quatro olhos: passaram nas regras e na biometria e só saem quando operadores aprovadores diferentes aprovarem. Quem pediu um pagamento manual não pode aprová-lo. O prazo do pagamento continua correndo; os de menos tempo restante primeiro.',
      },
      'payouts-deadline': {
        title: 'Prazo dos pagamentos',
        help: 'Todo saque em aberto pelo tempo que falta até o prazo do prêmio, os vencidos primeiro. O tempo esperando pela pessoa (biometria) aparece separado do tempo com o pixflow e o provedor.',
      },
    },
    languageName: { 'pt-BR': 'Português', en: 'English' },
  },
  reasonFamily: {
    registryStatus: (status: string) => `Situação cadastral: ${status}`,
    livenessRefused: (why: string) => `O provedor não deu link de prova de vida: ${why}`,
    invalidPixKey: (detail: string) => `Chave Pix inválida (${detail})`,
    payoutRejected: (detail: string) => `Pagamento recusado pelo provedor (${detail})`,
    providerContradicts: (status: string) => `O provedor contradiz a verificação: ${status}`,
    providerError: (label: string) => `Erro do provedor: ${label}`,
    impeded: (why: string) => `Impedido de apostar: ${why}`,
  },
  payouts: {
    caption: (title: string) => `${title}, os de menos tempo restante primeiro`,
    count: (total: number, shown: number) =>
      `${total} ${total === 1 ? 'pagamento' : 'pagamentos'}${total > shown ? `, os ${shown} de menos tempo mostrados` : ''}.`,
    payout: 'Pagamento',
    customer: 'Cliente',
    amount: 'Valor',
    status: 'Situação',
    requestedBy: 'Pedido por',
    byTheCustomer: 'o cliente, pela API',
    approvals: 'Aprovações',
    approvalsOf: (n: number, required: number) => `${n} de ${required}`,
    approvedBy: (who: string) => `por ${who}`,
    refusedByLabel: 'Recusado por',
    refusedBy: (who: string, reason: string) => `${who}: ${reason}`,
    deadline: 'Prazo',
    left: (left: string) => `faltam ${left}`,
    overdue: (late: string) => `vencido há ${late}`,
    state: 'Estado',
    onTime: 'no prazo',
    atRisk: 'em risco',
    missed: 'prazo perdido',
    waitedForPerson: 'Esperando pela pessoa',
    withPixflow: 'Com o pixflow e o provedor',
    noDeadline: 'sem prazo registrado',
    question: 'Aprovar este pagamento?',
    approveChoice: 'Aprovar: conta como uma aprovação; com as aprovações exigidas, o pagamento é enviado',
    refuseChoice: 'Recusar: o saque é recusado e nada é enviado',
    reasonLabel: 'Motivo (obrigatório para recusar)',
    reasonHelp: 'Fica na trilha de auditoria com o seu nome.',
    record: 'Registrar decisão',
    mayNotDecide: (role: string) =>
      `Seu papel (${role}) pode ver este pagamento, mas só aprovadores e administradores o aprovam ou recusam.`,
    youRequested: 'Você pediu este pagamento: outro operador precisa aprová-lo.',
    youApproved: 'Você já aprovou este pagamento: falta a aprovação de outro operador.',
    notDecided: 'Decisão não aceita',
    notAwaiting: (now: string) =>
      `Este pagamento não aguarda aprovação: ele está ${now}. Sua decisão não foi enviada.`,
    isRequester: 'Quem pediu este pagamento não pode aprová-lo. Sua aprovação não foi registrada.',
    alreadyApproved:
      'Você já aprovou este pagamento; a outra aprovação precisa ser de outro operador. Nada foi registrado.',
    approvedDone: (n: number, required: number, status: string) =>
      `Registrado: aprovado (${n} de ${required}). O saque está ${status}.`,
    refusedDone: (status: string) => `Registrado: recusado. O saque está ${status}.`,
  },
  impededReason: {
    social_benefit: 'recebe benefício social (Bolsa Família ou BPC)',
    self_excluded: 'autoexcluído',
    court_order: 'ordem judicial',
    other: 'outro motivo do cadastro',
  } satisfies Record<ImpededReason, string>,
  age: {
    s: (n: number) => `${n} s`,
    min: (n: number) => `${n} min`,
    h: (h: number, m: number) => `${h} h ${m} min`,
    d: (d: number, h: number) => `${d} d ${h} h`,
  },
} satisfies { labels: Labels } & Record<string, unknown>;

export type Catalog = typeof ptBR;

const en: Catalog = {
  lang: 'en',
  intl: 'en-GB',
  product: 'pixflow back office',
  brand: 'back office',
  skip: 'Skip to content',
  nav: {
    label: 'Main',
    queues: 'Queues',
    search: 'Search',
    audit: 'Audit trail',
    apiKeys: 'API keys',
    breadcrumb: 'Breadcrumb',
  },
  signOut: 'Sign out',
  languageSwitch: 'Language of the pages',
  footer: {
    zone: (zone: string) => `Times in ${zone}.`,
    money: 'Amounts in R$.',
  },
  yes: 'yes',
  no: 'no',
  unknown: 'unknown',
  none: 'none',
  never: 'never',
  dash: '—',
  back: 'Back',
  nothingChanged: 'Nothing was changed.',
  dayHint: 'dd/mm/yyyy',
  signIn: {
    title: 'Sign in',
    email: 'Email',
    password: 'Password',
    submit: 'Sign in',
    wrong: 'Wrong email or password.',
    tooMany: 'Too many sign-in attempts from here. Wait 15 minutes and try again.',
  },
  home: {
    title: 'Queues',
    caption: 'Open cases per queue',
    queue: 'Queue',
    cases: 'Cases',
    oldest: 'Oldest waiting',
    findCustomer: 'Find a customer by CPF',
    findCustomerButton: 'Open customer',
    findCase: 'Find a case by txid, transactionId or E2E id',
    findCaseButton: 'Find case',
  },
  queue: {
    cpf: 'CPF',
    since: 'Waiting since (from)',
    until: 'Waiting since (to)',
    type: 'Type',
    allTypes: 'Deposits and withdrawals',
    deposits: 'Deposits',
    withdrawals: 'Withdrawals',
    filter: 'Filter',
    count: (total: number, shown: number) =>
      `${total} case${total === 1 ? '' : 's'}${total > shown ? `, the oldest ${shown} shown` : ''}.`,
    caption: (title: string) => `${title}, oldest first`,
    case: 'Case',
    customer: 'Customer',
    amount: 'Amount',
    waiting: 'Waiting',
    details: 'Details',
    someone: 'customer',
    empty: 'Nothing waits here.',
    detail: {
      kyc: (status: string) => `registry status ${status}`,
      pep: 'PEP',
      liveness: (status: string) => `liveness: ${status}`,
      payer: (name: string) => `payer ${name}`,
      payerCpf: (cpf: string) => `CPF ${cpf}`,
    },
  },
  flow: {
    status: 'Status',
    since: 'since',
    facts: 'Facts',
    customer: 'Customer',
    amount: 'Amount',
    started: 'Started',
    workflow: 'Workflow',
    inTemporal: (id: string) => `${id} in the Temporal UI`,
    id: {
      onboarding: 'Business id',
      deposit: 'txid',
      withdrawal: 'transactionId',
      biometrics: 'Business id',
    },
    kyc: 'Registry status (KYC)',
    pep: 'Politically exposed person (PEP)',
    liveness: 'Liveness',
    noLivenessYet: 'no answer yet',
    reasons: 'Reasons',
    review: 'Review',
    merchant: 'Merchant',
    paidBy: 'Paid by',
    payerIsCustomer: 'Payer is the customer',
    e2eId: 'End-to-end id (E2E)',
    resolution: 'Resolution',
    reason: 'Reason',
    decidedBy: (decision: string, by: string, reason: string) => `${decision} by ${by}: ${reason}`,
    decision: 'Decision',
    noDecision: 'No decision is open on this case.',
    mayNotDecide: (role: string) => `Your role (${role}) may look at this case but not decide it.`,
    reviewQuestion: 'Approve this person?',
    approveChoice: 'Approve: they may move money',
    refuseChoice: 'Refuse: the onboarding is rejected',
    resolutionQuestion: 'Credit this deposit?',
    acceptChoice: 'Accept: credit the customer',
    returnChoice: 'Return: send the money back to the payer',
    reasonLabel: 'Reason',
    reasonHelp: 'Kept in the audit trail with your name.',
    record: 'Record decision',
    timeline: 'Timeline',
    audit: 'Audit trail of this case',
    exportCase: 'Export as CSV',
    recorded: {
      approve: (status: string) => `Recorded: approved. The onboarding is ${status}.`,
      refuse: (status: string) => `Recorded: refused. The onboarding is ${status}.`,
      accept: (status: string) => `Recorded: accepted. The deposit is ${status}.`,
      return: (status: string) => `Recorded: to be returned. The deposit is ${status}.`,
    },
  },
  timeline: {
    empty: 'Nothing recorded yet.',
    verificationUpdated: 'Customer: verification changed',
    impeded: 'Customer: impeded from betting',
    closed: 'Customer: account closed',
    endpointDisabled: 'Webhook endpoint disabled',
    deadlineAtRisk: 'Withdrawal: payout deadline at risk',
    deadlineMissed: 'Withdrawal: payout deadline missed',
  },
  customer: {
    title: (cpf: string) => `Customer ${cpf}`,
    verification: 'Verification',
    since: 'since',
    kyc: 'Registry (KYC)',
    name: 'Name',
    registry: 'Registry status',
    notRead: 'not read',
    pep: 'Politically exposed person (PEP)',
    under18: 'Under 18',
    deceased: 'Deceased',
    restricted: 'On a restricted list',
    read: 'Read',
    suspended: 'Suspended',
    payoutsToday: (day: string) => `Payouts today, ${day}`,
    sent: 'Sent or under way',
    sentAmount: (amount: string, n: number) => `${amount} in ${n} withdrawal${n === 1 ? '' : 's'}`,
    dailyLimit: 'Daily limit',
    left: 'Left today',
    lastBiometric: 'Last biometric check',
    depositLimits: 'Deposit limits the person set',
    depositPeriod: { daily: 'Daily', weekly: 'Weekly', monthly: 'Monthly' },
    noLimit: 'none',
    depositLeft: (limit: string, left: string) => `${limit}, ${left} left`,
    pendingLimit: (limit: string, at: string) => ` (${limit} from ${at})`,
    accounts: 'Registered accounts',
    pixKey: (type: string) => `Pix key ${type}`,
    account: (masked: string, kind: string, source: string, at: string) =>
      `${masked} (${kind}, ${source}, ${at})`,
    noneYet: 'None.',
    flows: 'Flows',
    flowsCaption: "The customer's flows, newest first",
    flow: 'Flow',
    status: 'Status',
    amount: 'Amount',
    started: 'Started',
    timeline: 'Timeline',
    audit: "Operator actions on this customer's cases",
  },
  impeded: {
    heading: 'Impediment (registry of impeded people)',
    reason: 'Reason',
    since: 'Since',
    until: 'Until',
    noEnd: 'no end date',
    source: 'Found by',
    source_: {
      'registry:deposit': 'the check before a deposit',
      'registry:onboarding': 'the check at sign-up',
      'registry:rescreening': 'a periodic check',
    } as Record<string, string>,
    registryNow: "The registry's latest answer",
    registryAnswer: { eligible: 'eligible', impeded: 'impeded' } as Record<string, string>,
    /** An audit row's before and after. */
    state: { impeded: 'Impeded', closed: 'Account closed', eligible: 'Eligible' } as Record<string, string>,
    closeBy: 'Close by',
    left: (left: string) => `${left} left`,
    overdue: (late: string) => `overdue by ${late}`,
    closed: 'Account closed',
    closedBy: (at: string, by: string, reason: string) => `${at}, by ${by}: ${reason}`,
    none: 'The registry of impeded people does not name this person.',
    closeQuestion: "Close this person's account?",
    closeHelp: 'No deposit is taken; their balance can still be withdrawn to their own account.',
    close: 'Close account',
    reinstateQuestion: 'Lift the impediment?',
    reinstateHelp:
      "Only once the registry's latest answer says the person is eligible: they may deposit again.",
    reinstate: 'Lift impediment',
    mayNotDecide: (role: string) =>
      `Your role (${role}) may see this customer, but not close the account or lift the impediment.`,
    closedDone: 'Recorded: the account is closed.',
    reinstatedDone: 'Recorded: the impediment is lifted; the person may deposit again.',
    notOpen: 'Nothing to close',
    notOpenText: 'This person is not impeded, or the account is closed already. Nothing was changed.',
    stillImpeded: 'Still impeded',
    stillImpededText:
      "The registry's latest answer still names this person (or this person is not impeded). The impediment stays; nothing was changed.",
    caption: 'Impeded customers, the least time left to close first',
    customer: 'Customer',
    count: (total: number, shown: number) =>
      `${total} ${total === 1 ? 'person' : 'people'}${total > shown ? `, the ${shown} with the least time left shown` : ''}.`,
  },
  audit: {
    title: 'Audit trail',
    intro: 'Every operator action, newest first. Rows are only ever added, never changed.',
    filters: 'Filters',
    who: 'Who (operator email)',
    action: 'Action',
    anyAction: 'Every action',
    outcome: 'Outcome',
    anyOutcome: 'Every outcome',
    case: 'Case (flow id, txid or transactionId)',
    from: 'From',
    to: 'To',
    size: 'Per page',
    filter: 'Filter',
    clear: 'Clear filters',
    shown: (n: number) => `${n} action${n === 1 ? '' : 's'} shown.`,
    paging: 'Pages of the trail',
    newest: 'Newest',
    newer: '← Newer',
    older: 'Older →',
    export: 'Export these as CSV',
    exportAll: 'Export all as CSV',
    caption: 'Operator actions, newest first',
    when: 'When',
    whoColumn: 'Who',
    actionColumn: 'Action',
    outcomeColumn: 'Outcome',
    caseColumn: 'Case',
    change: 'Before → after',
    reason: 'Reason',
    empty: 'No operator action yet.',
    emptyFiltered: 'No action matches these filters.',
  },
  search: {
    title: 'Find a case',
    intro:
      "By a deposit's txid, a withdrawal's transactionId, a payment's end-to-end id (E2E) or the workflow id.",
    label: 'txid, transactionId, E2E id or workflow id',
    submit: 'Find case',
    none: (q: string) => `No case found for “${q}”.`,
    many: (q: string) => `More than one case for “${q}”:`,
    caption: 'Cases found, newest first',
    case: 'Case',
    status: 'Status',
    amount: 'Amount',
    started: 'Started',
  },
  keys: {
    title: 'API keys',
    intro:
      'The keys backends call /v1 with. Each holds scopes (a write scope includes its read); the API applies a change within seconds, without a restart. Secrets are shown once, when made, and kept only as hashes.',
    bootstrap: (n: number) =>
      ` Besides these, ${n} key${n === 1 ? '' : 's'} from API_KEYS hold${n === 1 ? 's' : ''} every scope; change ${n === 1 ? 'it' : 'them'} in the configuration.`,
    caption: 'API keys, newest first',
    name: 'Name',
    key: 'Key',
    scopes: 'Scopes',
    status: 'Status',
    created: 'Created',
    lastUsed: 'Last used',
    expires: 'Expires',
    change: 'Change',
    previousUntil: (at: string) => `previous secret until ${at}`,
    overlap: 'The old secret keeps working',
    overlapNo: 'no',
    overlap1h: '1 hour',
    overlap24h: '24 hours',
    rotate: 'Rotate',
    rotateLabel: (name: string) => `Rotate ${name}`,
    revoke: 'Revoke',
    revokeLabel: (name: string) => `Revoke ${name}`,
    empty: 'No API key records yet.',
    new: 'New API key',
    nameHelp: 'Who or what uses it, e.g. “Checkout backend”.',
    scopeNone: 'none',
    scopeRead: 'read',
    scopeWrite: 'write (and read)',
    expiresLabel: 'Expires',
    expiresNever: 'never',
    expiresIn: (days: number) => `in ${days} days`,
    create: 'Create key',
    mayNotChange: (role: string) =>
      `Your role (${role}) may look at API keys; an admin creates, rotates and revokes them.`,
    secretNote: 'Copy the key now: it is shown this once and kept only as a hash. Hand it to the backend as',
    secretLabel: (id: string) => `API key ${id}`,
    backToKeys: 'Back to API keys',
    created_: (name: string) => `API key “${name}” created`,
    rotated: (name: string) => `API key “${name}” rotated`,
    revokedFlash: (name: string, id: string) =>
      `Revoked “${name}” (${id}); the API refuses it within seconds.`,
  },
  errors: {
    notFound: 'Not found',
    notFoundText: (what: string) => `There is no ${what}. It may have been mistyped.`,
    what: {
      flow: 'flow with this id',
      queue: (name: string) => `queue named “${name}”`,
      customer: 'customer with this CPF',
      apiKey: 'API key with this id',
      flowOfType: (type: string) => `${type} with this id`,
      page: (path: string) => `page at ${path}`,
    },
    notAllowed: 'Not allowed',
    mayNotDecide: (role: string) => `Your role (${role}) may look at cases but not decide them.`,
    mayNotChangeKeys: (role: string) => `Your role (${role}) may look at API keys but not change them.`,
    alreadyDecided: 'Already decided',
    alreadyDecidedText: (now: string) =>
      `Someone decided this case first: it is ${now}. Your decision was not sent.`,
    notRotated: 'Not rotated',
    notRotatedText: 'There is no live API key with this id.',
    notRevoked: 'Not revoked',
    notRevokedText: 'This API key was revoked already.',
    formExpired: 'Form expired',
    formExpiredText:
      'This form was not sent from a page of this back office, or your session changed since it was shown. Reload the page and try again.',
    signedOut: 'Signed out',
    signedOutText: 'Your session ended. Sign in again; nothing was changed.',
    unavailable: 'Temporal is not answering',
    unavailableText:
      'pixflow could not reach the flow in time. Reload the case in a moment: a decision you sent may have been recorded.',
    failed: 'Something went wrong',
    failedText: 'pixflow could not answer; try again in a moment.',
    refused: 'Request refused',
    refusedText: 'The request could not be read.',
    tooLarge: 'The form sent is too large.',
    unstorable: 'Something sent cannot be stored or read as text.',
    unstorableField: 'holds a NUL character, a lone surrogate or broken percent-encoding',
    formRefused: 'Form not accepted',
    filterRefused: 'Filter not accepted',
    fieldsText: 'Some fields need another look.',
  },
  fields: {
    form: 'form',
    path: 'address',
    cpf: 'CPF',
    since: 'Waiting since (from)',
    until: 'Waiting since (to)',
    type: 'Type',
    decision: 'Decision',
    reason: 'Reason',
    who: 'Who',
    action: 'Action',
    outcome: 'Outcome',
    case: 'Case',
    from: 'From',
    to: 'To',
    size: 'Per page',
    before: 'Page (before)',
    after: 'Page (after)',
    q: 'Search',
    language: 'Language',
    name: 'Name',
    scopes: 'Scopes',
    expires: 'Expires',
    overlap: 'The old secret keeps working',
  },
  formErrors: {
    required: 'is required',
    cpf: 'must be a CPF: 11 digits, with the right check digits',
    atMost: (n: string) => `must be at most ${n} characters`,
    day: 'must be a date, dd/mm/yyyy',
    calendarDay: 'is not a calendar day',
    untilBeforeFrom: 'cannot be before the start',
    oneOf: (choices: string) => `must be ${choices}`,
    pageSize: 'must be 20, 50, 100 or 200',
    cursor: 'must be the number of a row of the trail',
    oneCursor: 'use one page only, before or after',
    mustSayWhy: 'must say why',
    decisionReview: 'must be approve or refuse',
    decisionResolution: 'must be accept or return',
    scopeLevel: 'must be none, read or write',
    oneScope: 'give the key at least one scope',
    expiry: 'must be never, 30, 90 or 365 days',
    overlap: 'must be none, 1 hour or 24 hours',
    text: 'must be text',
    id: 'must be an id: letters, digits and signs, no spaces',
    invalid: 'is not accepted',
  },
  labels: {
    flowType: {
      onboarding: 'Onboarding',
      deposit: 'Deposit',
      withdrawal: 'Withdrawal',
      biometrics: 'Biometrics',
    },
    status: {
      onboarding: {
        kyc: 'Reading the registry (KYC)',
        awaiting_liveness: 'Awaiting liveness',
        awaiting_review: 'Awaiting review',
        approved: 'Approved',
        rejected: 'Rejected',
        expired: 'Expired',
      },
      deposit: {
        creating: 'Creating the QR code',
        awaiting_payment: 'Awaiting payment',
        held: 'Held',
        completed: 'Completed',
        expired: 'Expired',
        failed: 'Failed',
        to_return: 'To be returned',
      },
      withdrawal: {
        validating: 'Validating',
        awaiting_biometrics: 'Awaiting biometrics',
        awaiting_approval: 'Awaiting approval',
        sending: 'Sending',
        processing: 'Processing',
        completed: 'Completed',
        failed: 'Failed',
        stuck: 'No outcome (reconciliation gave up)',
        refused: 'Refused',
      },
      biometrics: {
        issuing_link: 'Issuing a link',
        awaiting_identification: 'Awaiting identification',
        passed: 'Passed',
        failed: 'Failed',
        expired: 'Expired',
        unavailable: 'Unavailable',
      },
    },
    verification: {
      none: 'None',
      pending: 'Pending',
      approved: 'Approved',
      rejected: 'Rejected',
      expired: 'Expired',
      suspended: 'Suspended',
    },
    reason: {
      invalid_document: 'Invalid CPF',
      restricted_document: 'CPF on a restricted list',
      document_not_found: 'CPF not found in the registry',
      deceased_or_under_age: 'Holder deceased or under age',
      under_18: 'Under 18',
      deceased: 'Holder deceased',
      liveness_failed: 'Liveness check failed',
      liveness_refused: 'Liveness check refused',
      review_approved: "Approved at an operator's review",
      review_refused: "Refused at an operator's review",
      deadline_passed: 'The onboarding deadline passed',
      third_party_payer: "Paid by a third party (the payer's CPF is not the customer's)",
      qr_expired_unpaid: 'The QR code expired unpaid',
      provider_unavailable: 'Provider unavailable',
      not_verified: 'Customer not verified',
      payee_not_owner: "The payee account is not the customer's",
      limit_exceeded: 'Daily limit exceeded',
      biometrics_failed: 'Biometric check failed',
      biometrics_timeout: 'Biometric check not done in time',
      biometrics_unavailable: 'Biometric check unavailable',
      operator_refused: 'Refused by an operator',
      authorization_denied: "Denied by the operator's authorization",
      authorization_unavailable: "No answer from the operator's authorization",
      amount_above_step_up: 'Amount above the biometric check threshold',
      first_payout_to_account: 'First payout to this account',
      provider_reported_failure: 'The provider reported a failure',
      no_final_outcome_before_deadline: 'No outcome from the provider before the deadline',
      not_onboarded_at_provider: 'Customer not onboarded at the provider',
    },
    registryStatus: {
      regular: 'Regular',
      pendente_regularizacao: 'Pending regularisation',
      suspenso: 'Suspended',
      cancelado: 'Cancelled',
      titularfalecido: 'Holder deceased',
      consta_lista_restritiva: 'On a restricted list',
      null: 'no status',
    },
    liveness: {
      requested: 'Requested',
      processing: 'Processing',
      completed: 'Completed',
      failed: 'Failed',
      manual_approve_pending: 'Awaiting manual review',
      manual_approved: 'Approved at manual review',
      manual_refused: 'Refused at manual review',
    },
    providerError: {
      INVALID_DOCUMENT: 'Invalid CPF',
      RESTRICT_DOCUMENT: 'CPF on a restricted list',
      DOCUMENT_NOT_FOUND: 'CPF not found',
      DECEASED_OR_UNDER_AGE: 'Holder deceased or under age',
      NOT_FOUND: 'Not found at the provider',
      UNAUTHORIZED: 'Credentials refused by the provider',
      RATE_LIMITED: "The provider's rate limit",
      PROVIDER_UNAVAILABLE: 'Provider unavailable',
      DUPLICATE_TRANSACTION: 'Transaction repeated at the provider',
      CONTRACT_VIOLATION: "The provider's answer broke its contract",
      BAD_REQUEST: 'Request refused by the provider',
    },
    action: {
      sign_in: 'Sign-in',
      sign_out: 'Sign-out',
      'onboarding.review': 'Onboarding review',
      'onboarding.approve': 'Onboarding approved',
      'onboarding.refuse': 'Onboarding refused',
      'deposit.resolution': 'Deposit resolution',
      'deposit.accept': 'Deposit accepted',
      'deposit.return': 'Deposit to be returned',
      'audit.export': 'Audit export',
      'api_key.create': 'API key created',
      'api_key.rotate': 'API key rotated',
      'api_key.revoke': 'API key revoked',
      'customer.close': 'Impeded account closed',
      'customer.reinstate': 'Impediment lifted',
      'withdrawal.decision': 'Payout decision',
      'withdrawal.approve': 'Payout approved',
      'withdrawal.refuse': 'Payout refused',
    },
    outcome: { done: 'Done', refused: 'Refused', conflict: 'Conflict', failed: 'Failed' },
    auditReason: { sign_in_rate_limited: 'Too many sign-in attempts from this address' },
    role: { viewer: 'Viewer', reviewer: 'Reviewer', approver: 'Approver', admin: 'Admin' },
    keyStatus: { active: 'Active', expired: 'Expired', revoked: 'Revoked' },
    accountKind: { pix_key: 'Pix key', bank_account: 'bank account' },
    accountSource: { deposit: 'from a deposit', api: 'through the API' },
    decision: { approve: 'approval', refuse: 'refusal', accept: 'acceptance', return: 'return' },
    queue: {
      'onboardings-awaiting-review': {
        title: 'Onboardings awaiting review',
        help: 'KYC passed and the liveness check asks for a person: approve or refuse each one.',
      },
      'deposits-held': {
        title: 'Deposits held for a third-party payer',
        help: 'Paid by someone other than the customer: accept to credit it, or return it to the payer.',
      },
      'withdrawals-awaiting-biometrics': {
        title: 'Withdrawals awaiting biometrics',
        help: 'Large or first payouts wait for the customer to pass a biometric check; nothing to decide here, but old ones may need a call.',
      },
      failed: {
        title: 'Failed deposits and withdrawals',
        help: 'The provider refused or failed these. No money moved; the customer may need to be told.',
      },
      'customers-impeded': {
        title: 'Impeded customers',
        help: 'The registry of impeded people (SIGAP) names these people: no deposit is taken, and their balance can be withdrawn to their own account. Close each account by its deadline; the least time left first.',
      },
      'reconciliation-gave-up': {
        title: 'Reconciliation gave up',
        help: 'Payouts whose outcome the provider never told and no inquiry found before the deadline. Check with the provider before paying again.',
      },
      'payouts-awaiting-approval': {
        title: 'Payouts awaiting approval',
        help: 'Withdrawals above the four-eyes amount: they passed the rules and the biometric check, and go out only once different approvers approve them. Whoever asked for a manual payout may not approve it. The payout deadline keeps running; the least time left first.',
      },
      'payouts-deadline': {
        title: 'Payout deadlines',
        help: 'Every open withdrawal by the time left to its prize deadline, overdue first. Time spent waiting for the person (biometric check) is shown apart from time spent with pixflow and the provider.',
      },
    },
    languageName: { 'pt-BR': 'Português', en: 'English' },
  },
  reasonFamily: {
    registryStatus: (status: string) => `Registry status: ${status}`,
    livenessRefused: (why: string) => `The provider gave no liveness link: ${why}`,
    invalidPixKey: (detail: string) => `Invalid Pix key (${detail})`,
    payoutRejected: (detail: string) => `Payout refused by the provider (${detail})`,
    providerContradicts: (status: string) => `The provider contradicts the verification: ${status}`,
    providerError: (label: string) => `Provider error: ${label}`,
    impeded: (why: string) => `Impeded from betting: ${why}`,
  },
  payouts: {
    caption: (title: string) => `${title}, the least time left first`,
    count: (total: number, shown: number) =>
      `${total} ${total === 1 ? 'payout' : 'payouts'}${total > shown ? `, the ${shown} with the least time left shown` : ''}.`,
    payout: 'Payout',
    customer: 'Customer',
    amount: 'Amount',
    status: 'Status',
    requestedBy: 'Requested by',
    byTheCustomer: 'the customer, through the API',
    approvals: 'Approvals',
    approvalsOf: (n: number, required: number) => `${n} of ${required}`,
    approvedBy: (who: string) => `by ${who}`,
    refusedByLabel: 'Refused by',
    refusedBy: (who: string, reason: string) => `${who}: ${reason}`,
    deadline: 'Deadline',
    left: (left: string) => `${left} left`,
    overdue: (late: string) => `overdue by ${late}`,
    state: 'State',
    onTime: 'on time',
    atRisk: 'at risk',
    missed: 'deadline missed',
    waitedForPerson: 'Waiting for the person',
    withPixflow: 'With pixflow and the provider',
    noDeadline: 'no deadline recorded',
    question: 'Approve this payout?',
    approveChoice: 'Approve: counts as one approval; with the approvals required, the payout is sent',
    refuseChoice: 'Refuse: the withdrawal is refused and nothing is sent',
    reasonLabel: 'Reason (required to refuse)',
    reasonHelp: 'Kept in the audit trail with your name.',
    record: 'Record decision',
    mayNotDecide: (role: string) =>
      `Your role (${role}) may see this payout, but only approvers and admins approve or refuse it.`,
    youRequested: 'You asked for this payout: another operator must approve it.',
    youApproved: 'You have approved this payout already: another operator’s approval is missing.',
    notDecided: 'Decision not taken',
    notAwaiting: (now: string) =>
      `This payout is not awaiting approval: it is ${now}. Your decision was not sent.`,
    isRequester: 'Whoever asked for this payout may not approve it. Your approval was not recorded.',
    alreadyApproved:
      'You have approved this payout already; the other approval must come from another operator. Nothing was recorded.',
    approvedDone: (n: number, required: number, status: string) =>
      `Recorded: approved (${n} of ${required}). The withdrawal is ${status}.`,
    refusedDone: (status: string) => `Recorded: refused. The withdrawal is ${status}.`,
  },
  impededReason: {
    social_benefit: 'receives a social benefit (Bolsa Família or BPC)',
    self_excluded: 'self-excluded',
    court_order: 'court order',
    other: 'another reason in the registry',
  } satisfies Record<ImpededReason, string>,
  age: {
    s: (n: number) => `${n} s`,
    min: (n: number) => `${n} min`,
    h: (h: number, m: number) => `${h} h ${m} min`,
    d: (d: number, h: number) => `${d} d ${h} h`,
  },
};

export const catalogs: Record<Language, Catalog> = { 'pt-BR': ptBR, en };

export const catalogFor = (lang: Language): Catalog => catalogs[lang];

/** The label of a code in a record of labels; a code it does not know (an older row's) as written. */
const labelIn = (labels: Record<string, string>, code: string): string =>
  Object.hasOwn(labels, code) ? (labels[code] as string) : code;

const isProviderErrorCode = (v: string): v is ProviderErrorCode =>
  (providerErrorCodes as readonly string[]).includes(v);

/** Whose statuses an audit row's before and after are, by its action. */
function auditChange(
  t: Catalog,
  status: (type: string, code: string) => string,
  action: string,
  before: unknown,
  after: unknown,
): string {
  const l = t.labels;
  const statusIn = (v: unknown) =>
    v && typeof v === 'object' && 'status' in v ? String((v as { status: unknown }).status) : undefined;
  const [b, a] = [statusIn(before), statusIn(after)];
  if (!b && !a) return '';
  const [kind] = action.split('.');
  const word = (s: string | undefined) =>
    s === undefined
      ? t.dash
      : kind === 'api_key'
        ? labelIn(l.keyStatus, s)
        : kind === 'customer'
          ? labelIn(t.impeded.state, s)
          : status(kind ?? '', s);
  return `${word(b)} → ${word(a)}`;
}

/** The words for codes and the things made of them, in one language. */
export function labelsFor(lang: Language) {
  const t = catalogs[lang];
  const l = t.labels;

  const status = (type: string, code: string) =>
    Object.hasOwn(l.status, type) ? labelIn(l.status[type as FlowType], code) : code;

  /** One reason code, or one of a family (prefix and a part from elsewhere). */
  const oneReason = (code: string): string => {
    if (Object.hasOwn(l.reason, code)) return l.reason[code as ReasonCode];
    if (code.startsWith(KYC_STATUS_PREFIX))
      return t.reasonFamily.registryStatus(labelIn(l.registryStatus, code.slice(KYC_STATUS_PREFIX.length)));
    if (code.startsWith(LIVENESS_REFUSED_PREFIX)) {
      const providerCode = code.slice(LIVENESS_REFUSED_PREFIX.length).toUpperCase();
      if (isProviderErrorCode(providerCode))
        return t.reasonFamily.livenessRefused(l.providerError[providerCode]);
    }
    if (isProviderErrorCode(code)) return t.reasonFamily.providerError(l.providerError[code]);
    if (code.startsWith(IMPEDED_PREFIX))
      return t.reasonFamily.impeded(labelIn(t.impededReason, code.slice(IMPEDED_PREFIX.length)));
    const [family = '', detail = ''] = code.split(/:\s*(.*)/s);
    if (family === INVALID_PIX_KEY) return t.reasonFamily.invalidPixKey(detail);
    if (family === PAYOUT_REJECTED_REASON) return t.reasonFamily.payoutRejected(detail);
    if (family === PROVIDER_CONTRADICTS)
      return t.reasonFamily.providerContradicts(labelIn(l.liveness, detail));
    // The provider's own words for a failed payout, or a code from a later version: as written.
    return code;
  };

  /** A reason as a flow writes it: one code, or KYC's codes joined by commas. */
  const reason = (text: string | null | undefined): string => {
    if (!text) return '';
    const parts = text.split(',').map((p) => p.trim());
    if (parts.length > 1 && parts.every((p) => /^[a-z0-9_]+$/.test(p)))
      return parts.map(oneReason).join('; ');
    return oneReason(text);
  };

  /** An event type as the timeline shows it: `deposit.held` as the deposit's status. */
  const event = (type: string): string => {
    if (type === 'customer.verification_updated') return t.timeline.verificationUpdated;
    if (type === 'customer.impeded') return t.timeline.impeded;
    if (type === 'customer.closed') return t.timeline.closed;
    if (type === 'webhook_endpoint.disabled') return t.timeline.endpointDisabled;
    if (type === 'withdrawal.deadline_at_risk') return t.timeline.deadlineAtRisk;
    if (type === 'withdrawal.deadline_missed') return t.timeline.deadlineMissed;
    const [flow = '', code = ''] = type.split('.');
    if (!Object.hasOwn(l.flowType, flow)) return type;
    return `${l.flowType[flow as FlowType]}: ${status(flow, code)}`;
  };

  const changeOf = (action: string, before: unknown, after: unknown) =>
    auditChange(t, status, action, before, after);

  return {
    flowType: (type: string) => labelIn(l.flowType, type),
    status,
    verification: (code: string) => labelIn(l.verification, code),
    reason,
    /** A registry status; a refusal kept in its place (invalid_document...) reads as its reason. */
    registryStatus: (code: string | null) =>
      code && !Object.hasOwn(l.registryStatus, code)
        ? reason(code)
        : labelIn(l.registryStatus, code ?? 'null'),
    liveness: (code: string) => labelIn(l.liveness, code),
    action: (code: string) => labelIn(l.action, code),
    outcome: (code: string) => labelIn(l.outcome, code),
    /** An audit row's reason: pixflow's own as words, an operator's as they wrote it. */
    auditReason: (text: string) => labelIn(l.auditReason, text),
    role: (code: string) => labelIn(l.role, code),
    keyStatus: (code: string) => labelIn(l.keyStatus, code),
    accountKind: (code: string) => labelIn(l.accountKind, code),
    accountSource: (code: string) => labelIn(l.accountSource, code),
    decision: (code: string) => labelIn(l.decision, code),
    queueTitle: (q: QueueId) => l.queue[q].title,
    queueHelp: (q: QueueId) => l.queue[q].help,
    yesNo: (v: boolean | null | undefined) => (v === null || v === undefined ? t.unknown : v ? t.yes : t.no),
    event,
    change: changeOf,
  };
}
export type Label = ReturnType<typeof labelsFor>;
