# Mirante — português do Brasil

nav-label = Navegação principal
nav-overview = Visão geral
nav-catalog = Catálogo
nav-decisions = Decisões
lang-label = Idioma
footer-text = O Mirante lê o catálogo do monorepo devops; mude-o lá, por pull request.

loading = Carregando…
error-loading = Não foi possível carregar esta página.
none = Nenhum.
not-found-title = Não encontrado
not-found-text = Nada no catálogo tem este endereço.

state-validated = Validado
state-declared = Declarado
state-desired = Desejado
state-validated-help = Funciona hoje em produção, com tráfego ou dados reais.
state-declared-help = Existe no código de infraestrutura, mas não foi aplicado nem validado em produção.
state-desired-help = Decisão arquitetural no roadmap, ainda sem código nem validação.

qualifier-partial = parcial
qualifier-in_progress = em andamento
qualifier-deferred = deferido
qualifier-rejected = rejeitado
qualifier-future = futuro

priority-critical = crítico
priority-mvp = MVP
priority-later = fase 2–3
priority-normal = normal

totals-label = Totais por estado
tasks-pending = Pendências
matrix-title = Camadas × sites
matrix-layer = Camada
matrix-platform-wide = Toda a plataforma
matrix-total = Total
matrix-note = Cada célula conta os itens de uma camada em um site, por estado. Clique num número para ver esses itens.

catalog-title = Catálogo
filters-label = Filtros
filter-any = Todos
filter-state = Estado
filter-qualifier = Qualificador
filter-site = Site
filter-layer = Camada
search-placeholder = Buscar no catálogo…
search-button = Buscar
items-count = { $count ->
    [one] 1 item
   *[other] { $count } itens
}
items-shown = (mostrando os primeiros { $shown })
items-none = Nenhum item corresponde a estes filtros.
col-item = Item
col-state = Estado
col-layer = Camada
col-sites = Sites
platform-wide = toda a plataforma

layer-heading = Camada { $number } — { $name }
layer-kind-layer = Camada
layer-kind-capability = Capacidade transversal
layer-role = Papel
layer-rationale = Por que aqui
layer-components = Componentes
layer-children = Subcamadas
layer-items = Itens

item-evidence = Evidências
item-no-evidence = Marcado como validado, mas nenhuma evidência foi registrada.
item-no-iac = Marcado como declarado, mas nenhuma referência ao código de infraestrutura foi registrada.
item-desired-nothing = Desejado: nada foi construído ainda, então não há evidência a mostrar.
item-iac = IaC
item-reason = Rejeitado porque:
item-criterion = Deferido até:
item-depends-on = Depende de
item-dependents = Necessário para
item-hosts = Hosts
item-gpus = GPUs
item-phase = Fase do roadmap
item-tags = Etiquetas

evidence-reference = referência
evidence-attestation = atestado
evidence-probe = sonda
evidence-argocd = Argo CD

task-kind-decision = decisão pendente
task-after = só após:

decisions-title = Decisões arquiteturais
decisions-lead = O que foi decidido, o que foi rejeitado e por quê.
decision-topic = Tópico
decision-decision = Decisão
decision-rejected = Alternativa rejeitada
decision-reason = Motivo
decision-adr = ADR

sign-in = Entrar
sign-out = Sair
role-admin = admin
role-researcher = pesquisador
dev-login-banner = login de desenvolvimento
dev-login-help = Este portal roda sem provedor de identidade: qualquer pessoa nesta máquina pode escolher um usuário de demonstração.

nav-sites = Sites
sites-title = Sites
sites-host-groups = Grupos de hosts Proxmox
sites-hosts-count = { $count ->
    [one] 1 host
   *[other] { $count } hosts
}
sites-named-hosts = Hosts citados no catálogo
sites-host = Host
sites-tier = Tier
sites-roles = Papéis
sites-gpu-clusters = Clusters GPU
principles-title = Princípios
