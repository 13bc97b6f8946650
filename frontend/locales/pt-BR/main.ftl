# Mirante — português do Brasil
#
# Plural rules (CLDR) put 0 in `[one]` for Portuguese: a counted message whose `[one]`
# variant spells out "1" or "um" also has a `[0]` variant (a unit test checks every one).

nav-label = Navegação principal
nav-overview = Visão geral
nav-catalog = Catálogo
nav-decisions = Decisões
lang-label = Idioma
skip-to-content = Pular para o conteúdo
menu = Menu
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
    [0] Nenhum item
    [one] 1 item
   *[other] { $count } itens
}
items-range = ({ $from }–{ $to } nesta página)
pager-label = Páginas da lista
pager-previous = ← Anterior
pager-next = Próxima →
pager-position = Página { $page } de { $pages }
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
site-kicker = Site
site-items = Itens neste site
sites-host-groups = Grupos de hosts Proxmox
sites-hosts-count = { $count ->
    [0] Nenhum host
    [one] 1 host
   *[other] { $count } hosts
}
sites-named-hosts = Hosts citados no catálogo
sites-host = Host
sites-tier = Tier
sites-roles = Papéis
sites-gpu-clusters = Clusters GPU
principles-title = Princípios

## Entrada, perfil e páginas de mensagem (geradas no servidor)
auth-sign-in = Entrar
auth-intro = O Mirante é o catálogo e o portal de autosserviço do time de plataforma: o que a plataforma oferece em cada site e em que estado, o que está decidido e o que vem a seguir, e os formulários que transformam o pedido de um workspace com GPU ou de um banco de dados em um pull request revisado.
auth-continue = Continuar
auth-detail = Detalhes:
auth-dev-banner = Entrada de desenvolvimento: nenhum provedor de identidade está configurado (MIRANTE_OIDC_ISSUER não está definido). Quem alcança esta página pode entrar como qualquer usuário de demonstração.
auth-sign-in-as = Entrar como { $name }
auth-demo-admin = admin (grupo { $group })
auth-profile = Perfil
auth-username = Usuário
auth-email = E-mail
auth-role = Papel
auth-groups = Grupos
auth-new-token = Novo token “{ $name }”
auth-new-token-once = Copie agora: ele não será mostrado de novo.
auth-api-tokens = Tokens de API
auth-api-tokens-help = Para scripts e CI, envie este cabeçalho à API JSON:
auth-token-name = Nome
auth-token-already-made = Este formulário foi enviado de novo: o token foi criado na primeira vez e o valor só foi mostrado naquela hora. Revogue-o abaixo se ele se perdeu.
auth-token-created = Criado
auth-token-status = Situação
auth-token-revoke = Revogar
auth-token-create = Criar token
auth-token-revoked-at = revogado em { $when }
auth-token-last-used-at = último uso em { $when }
auth-token-never-used = nunca usado
auth-token-expires = Expira
auth-token-no-expiry = sem validade (criado antes de os tokens expirarem)
auth-token-expired = expirado
auth-token-days = Dias até expirar
auth-back = Voltar ao portal
auth-msg-session-expired-title = Sessão expirada
auth-msg-session-expired-text = Sua sessão atingiu a duração máxima. Entre novamente.
auth-msg-sign-in-required-title = É preciso entrar
auth-msg-sign-in-required-text = Entre primeiro, por favor.
auth-msg-degraded-title = O portal está degradado
auth-msg-degraded-text = O portal não consegue acessar o banco de dados agora. Nada do que você fez se perdeu; tente de novo em alguns segundos.
auth-msg-admins-only-title = Não permitido
auth-msg-admins-only-text = Esta página é para administradores.
auth-msg-cross-origin-title = Pedido recusado
auth-msg-cross-origin-text = Este formulário não foi enviado de uma página do portal.
auth-msg-too-many-title = Tentativas demais
auth-msg-too-many-text = Vieram pedidos demais deste tipo do seu endereço. Espere um minuto e tente de novo.
auth-msg-no-provider-title = Não encontrado
auth-msg-no-provider-text = Nenhum provedor OpenID está configurado.
auth-msg-provider-unreachable-title = Entrada indisponível
auth-msg-provider-unreachable-text = O provedor de identidade não responde agora. Tente de novo em instantes.
auth-msg-dev-login-off-title = Não encontrado
auth-msg-dev-login-off-text = A entrada de desenvolvimento está desligada.
auth-msg-unknown-demo-user-title = Usuário de demonstração desconhecido
auth-msg-unknown-demo-user-text = Escolha um dos usuários de demonstração.
auth-msg-bad-csrf-title = Pedido recusado
auth-msg-bad-csrf-text = Este formulário expirou ou não foi enviado da sua sessão. Recarregue a página e tente de novo.
auth-msg-no-such-token-title = Token inexistente
auth-msg-no-such-token-text = Esse token não existe ou já foi revogado.
auth-msg-not-found-title = Página não encontrada
auth-msg-not-found-text = Não há página neste endereço.
auth-msg-wrong-method-title = Não permitido
auth-msg-wrong-method-text = Este endereço não aceita este tipo de pedido.
auth-fail-no-attempt-title = Falha ao entrar
auth-fail-no-attempt-text = Falha ao entrar: não há entrada em andamento (expirou, ou este link já foi usado).
auth-fail-provider-error-title = Falha ao entrar
auth-fail-provider-error-text = Falha ao entrar: o provedor de identidade respondeu com um erro.
auth-fail-no-code-title = Falha ao entrar
auth-fail-no-code-text = Falha ao entrar: o provedor de identidade não enviou código nem state.
auth-fail-state-mismatch-title = Falha ao entrar
auth-fail-state-mismatch-text = Falha ao entrar: state não confere (a resposta não pertence a uma entrada iniciada aqui).
auth-fail-rejected-title = Falha ao entrar
auth-fail-rejected-text = Falha ao entrar: não foi possível verificar a resposta do provedor de identidade.

## Roadmap, grafo de dependências e achados
nav-roadmap = Roadmap
nav-findings = Achados
roadmap-title = Roadmap
roadmap-lead = O que está feito, o que está pronto para começar (tudo de que depende está validado) e o que está bloqueado, e por quê. O progresso conta itens por estado.
roadmap-graph-link = Grafo de dependências
roadmap-export-md = Markdown
roadmap-export-csv = CSV
roadmap-phases = Fases
roadmap-unphased = Sem fase planejada
roadmap-share = { $pct }% validado · { $validated } validados, { $declared } declarados, { $desired } desejados de { $total }
roadmap-progress-sites = Progresso por site
roadmap-progress-layers = Progresso por camada
roadmap-blocked-by = bloqueado por
roadmap-via = por meio de { $name }
roadmap-tasks = Pendências
roadmap-tasks-lead = Críticas e MVP primeiro; uma tarefa fica bloqueada enquanto uma tarefa anterior estiver pendente ou um item de que depende não estiver validado.
roadmap-col-priority = Prioridade
roadmap-col-task = Tarefa
roadmap-col-status = Situação
status-done = feito
status-ready = pronto
status-blocked = bloqueado
roadmap-graph-title = Grafo de dependências
graph-svg-title-to = Grafo de dependências, caminho crítico até { $name }
roadmap-graph-lead = Itens que dependem de outros, em colunas da esquerda para a direita: cada coluna espera pelas colunas à sua esquerda. Clique num nó para ver o caminho crítico até ele; o caminho lista cada item com um link para a sua página.
roadmap-graph-to = Caminho crítico até
roadmap-graph-none = (nenhum)
roadmap-graph-show = Mostrar
roadmap-graph-unknown = Não há item com esse id; o grafo aparece sem caminho.
roadmap-graph-path = Caminho crítico:
roadmap-graph-legend-blocked = borda tracejada: bloqueado
roadmap-graph-legend-path = laranja grosso: caminho crítico
roadmap-graph-note = O mesmo desenho como arquivo:

## Histórico do catálogo (a partir do histórico git do monorepo)
history-title = Mudanças de estado
history-new = novo
history-removed = removido
history-none = Nenhuma mudança de estado deste item está registrada no histórico do monorepo.
history-unavailable-directory = O catálogo é lido de um diretório, que não guarda histórico: as mudanças de estado vêm do histórico git do monorepo.
history-unavailable-embedded = O catálogo é o de demonstração embutido no portal, que não guarda histórico: as mudanças de estado vêm do histórico git do monorepo.
history-unavailable-unreadable = Não foi possível ler o histórico do monorepo agora.
history-col-date = Data
history-col-commit = Commit
burnup-title = Progresso ao longo do tempo
burnup-lead = Itens por estado em cada commit do monorepo que mudou o catálogo: validados embaixo, depois declarados, depois desejados.
burnup-chart-title = Itens por estado ao longo do tempo
burnup-desc = De { $from } a { $to }: validados { $validated_from } → { $validated_to }, declarados { $declared_from } → { $declared_to }, desejados { $desired_from } → { $desired_to }.
burnup-axis = itens
burnup-empty = O catálogo ainda não tem revisão no histórico do monorepo.
burnup-skipped = { $count ->
    [0] Nenhum commit ficou de fora: o catálogo de todos carregou.
    [one] Um commit cujo catálogo não carregou ficou de fora.
   *[other] { $count } commits cujo catálogo não carregou ficaram de fora.
}
burnup-table = Os mesmos números em tabela
findings-title = Achados
findings-lead = O que o catálogo afirma e suas evidências não sustentam. Erros fazem o catalog check falhar; avisos e informações, não.
findings-none = Nenhum achado: toda afirmação tem respaldo.
severity-error = Erros
severity-warning = Avisos
severity-info = Informações
finding-validated-without-evidence = Validado, mas sem evidência (probe, aplicação do Argo CD, atestado ou referência).
finding-validated-only-free-text = Validado só com texto livre: acrescente um probe, uma aplicação do Argo CD, um atestado datado ou uma referência de IaC.
finding-attestation-stale = Atestado de { $by } em { $date } tem { $age } dias (limite { $days }).
finding-attestation-date-invalid = Atestado de { $by } tem data “{ $date }”, que não é uma data passada (AAAA-MM-DD).
finding-declared-without-iac = Declarado, mas nenhuma referência de IaC diz onde está o código.
finding-validated-depends-on-unvalidated = Validado, mas depende de { $dependency }, que está { $state }.
finding-deferred-without-criterion = Deferido, mas nenhum critério diz quando será retomado.
finding-rejected-without-reason = Rejeitado, mas nenhum motivo diz por quê.
finding-iac-path-outside = O caminho de IaC { $path } é absoluto ou sai do monorepo.
finding-iac-path-missing = O caminho de IaC { $path } não existe no monorepo.
finding-iac-key-missing = A chave de IaC { $key } não foi encontrada em { $path }.
finding-iac-unreadable = Não foi possível procurar a chave { $key } em { $path }: { $error }
finding-declared-not-real = Declarado em { $path }, mas não validado em produção.
finding-declared-not-real-key = Declarado em { $path } (chave { $key }), mas não validado em produção.
severity-one-error = erro
severity-one-warning = aviso
severity-one-info = info

## Self-service: templates, forms, previews and requests
nav-self-service = Autoatendimento
nav-requests = Pedidos
ss-title = Autoatendimento
ss-intro = Peça o que precisa por um formulário: o portal transforma o pedido num pull request no monorepo de devops e o acompanha até o merge.
ss-no-templates = Nenhum template está disponível para você.
ss-start = Começar
ss-see-requests = Ver seus pedidos
ss-problems-link = Templates que não carregaram
ss-needs-approval = Precisa de aprovação
ss-step-form = Formulário
ss-step-preview = Prévia
ss-choose = Escolha…
ss-capacity = { $count ->
    [0] 0 GPUs
    [one] { $count } GPU
   *[other] { $count } GPUs
}
ss-one-per-line = Um por linha.
ss-preview-button = Ver a prévia dos arquivos
ss-cancel = Cancelar
ss-target = Diretório de destino
ss-compared-with = Comparado com
ss-approval = Aprovação
ss-approval-required = Um administrador aprova antes de o pull request ser aberto.
ss-approval-none = Sem aprovação: o pull request é aberto em seguida.
ss-files-count = { $count ->
    [0] 0 arquivos
    [one] { $count } arquivo
   *[other] { $count } arquivos
}
ss-submit = Enviar o pedido
ss-back-to-edit = Voltar e editar
ss-file-added = novo
ss-file-modified = alterado
ss-file-unchanged = sem mudança
ss-problems-title = Problemas nos templates
ss-problems-intro = Templates com problemas ficam fora do autoatendimento; os demais continuam funcionando. Corrija o arquivo e recarregue.
ss-problems-none = Todos os templates carregaram.
ss-problem-where = Onde
ss-problem-what = Problema
ss-item = Item
ss-err-not_an_object = Os valores devem ser um objeto de nomes de parâmetros para valores.
ss-err-unknown_field = Este template não tem o parâmetro { $field }.
ss-err-required = Um valor é obrigatório.
ss-err-wrong_type = Esperava-se um valor do tipo { $expected }.
ss-err-too_small = Deve ser pelo menos { $minimum }.
ss-err-too_large = Deve ser no máximo { $maximum }.
ss-err-too_short = Pelo menos { $min_length } caracteres.
ss-err-too_long = No máximo { $max_length } caracteres.
ss-err-not_in_enum = Deve ser um de: { $allowed }.
ss-err-pattern = Não tem a forma esperada ({ $pattern }).
ss-err-pattern-words = Não tem a forma esperada: { $words }
ss-err-not_dns_label = Apenas letras minúsculas, dígitos e hífens, começando e terminando com letra ou dígito, no máximo 63 caracteres.
ss-err-not_external_url = Um endereço http:// ou https:// de um serviço na rede; nem esta máquina (localhost, 127.0.0.1) nem o serviço de metadados da nuvem (169.254.x.x).
ss-err-forbidden_character = Contém o caractere de controle ou invisível { $character }.
ss-err-not_an_option = Não é uma das opções do catálogo: { $allowed }.
ss-err-exceeds_capacity = { $value } pedidas, mas { $option } tem { $capacity } ({ $detail }).
ss-err-not_on_cluster = { $count ->
    [0] Você ainda não tem namespace de workspace em { $cluster }.
   *[other] Não está em { $cluster }: os seus lá são { $allowed }.
}
ss-no-namespace = Você ainda não tem workspace com GPU neste cluster: um banco roda no namespace de um dos seus workspaces.
ss-no-namespace-any = Você ainda não tem workspace com GPU em nenhum cluster: um banco roda no namespace de um dos seus workspaces.
ss-no-namespace-link = Pedir um workspace com GPU
ss-err-exceeds_free_capacity = Pede { $value }, { $option } tem { $capacity }, { $allocated } alocadas a { $holders }.
ss-gpus-free = { $free } / { $total } GPUs livres
ss-err-too_few_items = Pelo menos { $min_items }.
ss-err-too_many_items = No máximo { $max_items }.
ss-err-duplicate_item = Repete um item anterior.
ss-err-unsafe_path = Este valor não pode ser usado num caminho de arquivo.
ss-err-invalid_catalog = O catálogo ficaria inválido: { $file }:{ $line }: { $problem }
ss-err-needs_verifiable_evidence = Validado exige evidência verificável: um probe, uma aplicação do Argo CD, um atestado datado (quem, o quê, quando) ou a referência de IaC do item. Texto livre não basta.
req-state-submitted = enviado
req-state-awaiting_approval = aguardando aprovação
req-state-approved = aprovado
req-state-rejected = rejeitado
req-state-proposing = propondo
req-state-proposed = proposto
req-state-merged = mesclado
req-state-closed = fechado
req-state-failed = falhou
req-title = Pedidos
req-new = Novo pedido
req-all = Os pedidos de todos, os que aguardam aprovação primeiro.
req-mine = Seus pedidos, os mais novos primeiro.
req-none = Nenhum pedido ainda.
req-col-template = Pedido
req-col-author = Autor
req-col-state = Estado
req-col-created = Criado
req-page-title = Pedido #{ $id }
req-last-error = Último erro:
req-decide = Decisão
req-four-eyes = Você fez este pedido: outra pessoa administradora o aprova e faz o merge.
req-comment-optional = Comentário (opcional)
req-overcommit-reason = Motivo para exceder a capacidade (só para aprovar mais GPUs do que o cluster tem livres)
req-overcommitted = Capacidade excedida:
req-comment-required = Por que rejeitar? (obrigatório)
req-approve = Aprovar
req-reject = Rejeitar
req-merge = Mesclar
req-merge-help = O pull request está no monorepo local do portal: faça o merge (mescla) aqui.
req-timeline = Linha do tempo
req-branch = Branch
req-pull-request = Pull request
req-change-title = Mudança proposta
req-change-open = aberta
req-change-merged = integrada
req-change-closed = fechada
req-change-into = { $branch } para { $base }
req-change-commits = Commits
req-change-more-files = Mais arquivos mudaram do que os listados aqui.
req-no-pr = Ainda não aberto
req-values = Valores
req-no-pr-rejected = Nenhum: o pedido foi rejeitado
req-merge-open = Mesclar…
req-merge-confirm = Confirmar o merge
req-merge-what = Isto mescla o branch { $branch } no branch principal do monorepo: { $count ->
    [0] nenhum arquivo
    [one] um arquivo
   *[other] { $count } arquivos
} em { $target }. O portal não desfaz isso.
req-next-heading = O que acontece agora:
req-next-submitted = o portal confere o pedido e o envia para aprovação ou direto para um pull request.
req-next-awaiting_approval = um admin revisa o pedido e o aprova ou rejeita. A decisão aparece aqui, com o comentário.
req-next-approved = o portal abre um branch e um pull request com exatamente os arquivos abaixo, em alguns segundos.
req-next-proposing = o branch e o pull request estão sendo abertos; esta página mostra o pull request quando ele existir.
req-next-proposed = o pull request aguarda o merge; depois dele, o Argo CD aplica os arquivos no cluster.
req-next-merged = nada: os arquivos estão no branch principal e o Argo CD os aplica. Para mudá-los, faça um novo pedido.
req-next-rejected = nada: nenhum branch foi aberto. Leia o comentário acima e peça de novo com mudanças se ainda fizer sentido.
req-next-closed = nada: o pedido foi retirado, ou o pull request fechado sem merge. Peça de novo se ainda fizer sentido.
req-next-failed = um admin verifica o erro acima; o portal tenta de novo o que puder. Faça um novo pedido se continuar com falha.

## Live evidence checks (probes and Argo CD)
finding-probe-failing = A sonda de { $url } falha: { $reason }
finding-argocd-unhealthy = Aplicação { $app } do Argo CD: { $reason }

## Painel inicial (administradores)
dash-title = Requer atenção
dash-findings = Achados do lint
dash-findings-link = Todos os achados →
dash-checks = Verificações ao vivo falhando agora
dash-checks-summary = { $failing } de { $total } verificações falhando · última execução { $when }
dash-checks-never = As verificações ao vivo ainda não rodaram.
dash-checks-none = O catálogo não tem verificações ao vivo (sondas ou aplicações do Argo CD).
dash-checks-link = Achados das verificações ao vivo →
dash-check-probe = sonda
dash-check-argocd = Argo CD
dash-tasks = Tarefas pendentes
dash-tasks-summary = { $count ->
    [0] Nenhuma tarefa pendente
    [one] Uma tarefa pendente
   *[other] { $count } tarefas pendentes
}, as mais urgentes primeiro
dash-tasks-by-priority = Por prioridade
dash-tasks-by-site = Por site
dash-tasks-platform-wide = toda a plataforma
dash-tasks-link = Roadmap →
priority-none = sem prioridade
dash-approvals = Pedidos aguardando aprovação
dash-approvals-summary = { $count ->
    [0] Nenhum pedido aguarda decisão.
    [one] Um pedido aguarda decisão.
   *[other] { $count } pedidos aguardam decisão.
}
dash-approvals-by = { $target } por { $author }
dash-approvals-link = Pedidos aguardando aprovação →
dash-resources = Recursos por cluster
dash-resources-none = nenhum ainda
dash-resources-link = Todos os recursos →
dash-changes = Mudanças de estado recentes
dash-changes-unavailable = Histórico indisponível: o catálogo não é lido do histórico git do monorepo.
dash-changes-none = Nenhuma mudança de estado registrada.
dash-change-new = novo
dash-changes-link = Roadmap →

## O roadmap em Markdown (/roadmap.md)
md-title = Roadmap — { $platform }
md-catalog = Catálogo { $hash }.
md-catalog-at = Catálogo { $hash } na revisão { $revision }.
md-legend = Situação: **feito** = validado; **pronto** = todas as dependências validadas; **bloqueado** = espera algo que não foi feito.
md-overall = Geral: { $share }
md-col-status = situação
md-col-item = item
md-col-state = estado
md-col-blocked-by = bloqueado por
md-col-priority = prioridade
md-col-task = tarefa
md-col-sites = sites
md-col-progress = progresso

## Mudança de um item do catálogo por um administrador
change-title = Propor uma mudança
change-lead = A mudança vira um pull request no monorepo de devops: só as linhas de estado, qualificador e evidências do item mudam no seu arquivo do catálogo.
change-state = Estado
change-qualifier = Qualificador
change-qualifier-none = nenhum
change-evidence = Evidências
change-keep-help = As evidências desmarcadas são removidas.
change-add-attestation = Adicionar um atestado
change-by = Verificado por
change-date = Em
change-what = O que foi verificado
change-attestation-help = Deixe os três campos vazios para não adicionar nenhum.
change-iac-kept = mantida: uma referência de IaC é editada no arquivo do catálogo
change-add-other = Adicionar uma sonda, uma aplicação do Argo CD ou uma referência
change-probe-url = Endereço da sonda (http ou https)
change-probe-status = Status esperado
change-argocd-app = Aplicação do Argo CD
change-argocd-instance = Instância do Argo CD (site), se não for a padrão
change-ref-text = Referência: o que ela mostra
change-ref-url = Endereço da referência (http ou https), se houver
change-other-help = Cada uma é adicionada quando o seu primeiro campo é preenchido.
change-reason = Motivo
change-reason-help = Por que o item muda; aparece na solicitação e no pull request.
change-preview = Pré-visualizar a mudança
change-file = Arquivo do catálogo
change-evidence-same = sem mudança
change-no-approval = nenhuma no portal: o pull request é revisado na forja
change-propose = Propor a mudança
change-back = Voltar ao item

## Recursos: o que os pedidos criaram
nav-resources = Recursos
res-title = Recursos
res-mine = O que os seus pedidos criaram: onde está, o estado, quando expira e como acessar.
res-all = Os recursos de todos, por cluster.
res-none = Nenhum recurso ainda. Um pedido que você fizer vira um recurso aqui.
res-no-cluster = Sem cluster
res-template = Template
res-owner = Dono
res-cluster = Cluster
res-folder = Pasta no monorepo
res-expires = Expira em
res-requests = Pedidos
res-access = Como acessar
res-readme = Instruções no arquivo da pasta
res-host = Dentro do cluster em
res-secret = Credenciais no Secret
res-kubeconfig = Kubeconfig deste namespace
res-kubeconfig-help = Salve como ~/.kube/config ou aponte KUBECONFIG para ele; o kubectl faz o login pelo provedor de identidade do portal com o plugin oidc-login (kubectl krew install oidc-login). Ele não contém senha.
res-state-pending = pendente
res-state-proposed = proposto
res-state-merged = mesclado
res-state-syncing = sincronizando
res-state-live = no ar
res-state-degraded = degradado
res-state-removing = removendo
res-state-removed = removido
res-next-pending = Aguardando a aprovação de um admin ou a abertura do pull request.
res-next-proposed = O pull request está aberto; o recurso passa a existir quando for mesclado.
res-next-merged = Mesclado; aqui aparece como acessar.
res-next-removing = A remoção foi integrada; o Argo CD ainda o executa e as GPUs seguem reservadas até o Argo CD apagar a aplicação.
res-next-removed = A pasta não está mais no monorepo.
res-deploy-not-followed = O Argo CD não está configurado neste portal, então ele não sabe dizer se os arquivos foram aplicados no cluster: o recurso fica em "mesclado".
res-deploy-waiting = Aguardando a primeira resposta do Argo CD sobre esta pasta.
res-deploy-app = Aplicação no Argo CD
res-deploy-at = na revisão
res-deploy-says = O Argo CD diz:
res-deploy-error = O Argo CD não consegue responder agora, então o estado mostrado é o último que ele deu. Último erro:

## Notificações: textos de e-mail e webhook, a escolha de e-mail no perfil
notify-subject-awaits-approval = [Mirante] Pedido #{ $id } aguarda sua aprovação: { $title }
notify-subject-approved = [Mirante] Pedido #{ $id } aprovado: { $title }
notify-subject-rejected = [Mirante] Pedido #{ $id } recusado: { $title }
notify-subject-proposed = [Mirante] Pedido #{ $id } proposto: { $title }
notify-subject-merged = [Mirante] Pedido #{ $id } mesclado: { $title }
notify-subject-live = [Mirante] Pedido #{ $id } está no ar: { $title }
notify-subject-degraded = [Mirante] Pedido #{ $id } está degradado: { $title }
notify-subject-failed = [Mirante] Pedido #{ $id } falhou: { $title }
notify-headline-awaits-approval = { $requester } pede "{ $title }" (pedido #{ $id }, { $target }); o pedido aguarda a aprovação de um administrador.
notify-headline-approved = { $actor } aprovou seu pedido #{ $id } "{ $title }"; o pull request será aberto em seguida.
notify-headline-rejected = { $actor } recusou seu pedido #{ $id } "{ $title }".
notify-headline-proposed = O pull request do seu pedido #{ $id } "{ $title }" está aberto.
notify-headline-merged = O pull request do seu pedido #{ $id } "{ $title }" foi mesclado.
notify-headline-live = O Argo CD informa que seu pedido #{ $id } "{ $title }" está no ar.
notify-headline-degraded = O Argo CD informa que seu pedido #{ $id } "{ $title }" está degradado.
notify-headline-failed = Seu pedido #{ $id } "{ $title }" falhou.
notify-subject-expires-soon = [Mirante] Recurso #{ $id } expira em breve: { $title } ({ $target })
notify-subject-removal-opened = [Mirante] { $title } expirou: remoção proposta (pedido #{ $id })
notify-headline-expires-soon = Seu recurso "{ $title }" ({ $target }) expira em breve. Estenda-o na página dele, ou ele será removido depois de expirar.
notify-headline-removal-opened = Seu recurso "{ $title }" ({ $target }) expirou; o Mirante abriu a remoção dele, pedido #{ $id }. As GPUs ficam livres quando ela for mesclada.
notify-subject-removed = [Mirante] Pedido #{ $id } removeu { $title } ({ $target })
notify-subject-update-available = [Mirante] Recurso #{ $id } tem uma atualização de template: { $title } ({ $target })
notify-headline-removed = A remoção de "{ $title }" ({ $target }), pedido #{ $id }, foi mesclada: a pasta saiu do monorepo e as GPUs ficam livres quando o Argo CD não o executar mais.
notify-headline-update-available = O template do seu recurso "{ $title }" ({ $target }) mudou. A página dele mostra o que a nova versão muda nos arquivos; proponha a atualização de lá.
notify-comment = Comentário
notify-pull-request = Pull request
notify-detail = Detalhes
notify-open = Abrir o pedido
notify-footer = O Mirante enviou esta mensagem por causa de um pedido que você fez ou decide. Você pode desligar estes e-mails no seu perfil: { $profile }
auth-notifications = Notificações
auth-notify-email = Enviar-me e-mails sobre meus pedidos (e, para administradores, pedidos aguardando aprovação)
auth-notify-on = E-mail ligado.
auth-notify-off = E-mail desligado.
auth-notify-save = Salvar

## Dia dois: a página de um recurso e os pedidos que o mudam
res-page-title = Recurso #{ $id }
res-open-request = Um pedido sobre este recurso está em andamento; nenhuma outra mudança é aceita até ele ser mesclado, rejeitado ou retirado:
res-change = Mudar este recurso
res-change-help = Cada mudança é um pedido próprio, com seu pull request no monorepo, acompanhado até ser aplicado. Você pode retirá-lo antes de ser proposto.
res-extend = Prorrogar
res-extend-days = Nova duração, em dias a partir de hoje (no máximo { $max })
res-extend-help = Uma prorrogação dentro do limite do template não precisa de aprovação: o pull request é aberto na hora.
res-extend-button = Pedir a prorrogação
res-update = Mudar o tamanho
res-update-approval = Um administrador aprova a mudança antes de o pull request ser aberto. Mais GPUs são conferidas com as livres no cluster.
res-update-no-approval = A mudança não precisa de aprovação: o pull request é aberto na hora.
res-update-button = Pedir a mudança
res-remove = Remover
res-remove-open = Remover…
res-remove-what = Isto abre um pull request que apaga todos os arquivos em { $target }. Depois do merge, quando o Argo CD não o executar mais, o recurso fica removido e suas GPUs ficam livres de novo.
res-remove-button = Remover este recurso
req-action-update = Alteração
req-action-extend = Prorrogação
req-action-remove = Remoção
req-withdraw = Retirar este pedido
req-withdraw-help = Ele ainda não foi proposto: retirá-lo o fecha, e nada chega ao monorepo.
req-removed-files = { $count ->
    [0] Nenhum arquivo apagado
    [one] Um arquivo apagado
   *[other] { $count } arquivos apagados
}
req-file-deleted = (apagado)
req-resubmit = Pedir de novo com mudanças
req-resubmit-help = Este pedido terminou sem merge. Você pode pedir de novo: o formulário abre com os valores dele, para mudar o que o comentário acima pede; o novo pedido aponta para este.
req-resubmitted-as = Este pedido foi feito de novo como
req-resubmits = Refaz
ss-resubmitting = Este pedido refaz o #{ $id }: mude o que for preciso, visualize e envie.
res-update-available = Atualização disponível
res-update-versions = O template mudou desde que os arquivos foram gerados (versão { $from }, agora { $to }). Estas são as mudanças que a nova versão faz nos arquivos:
res-upgrade-needs = A nova versão pede antes estes valores:
res-upgrade-button = Propor esta atualização
ss-updates-title = Atualizações de recursos existentes
ss-updates-none = Todos os recursos estão na versão atual do template.
ss-problems-heading = Templates que não carregaram
res-back = Voltar ao recurso
res-extend-help-over = Prorrogações de até { $days } dias não precisam de aprovação: o pull request é aberto na hora. As mais longas aguardam um administrador.
ss-file-deleted = apagado
req-withdraw-help-proposed = O pull request está aberto: retirar o pedido o fecha na forja com um comentário dizendo isso, e nada é mesclado.
req-catalog-change-title = Mudança no catálogo: { $name }
sites-gpu-uncounted = { $model } (quantidade não informada)
search-title = Busca
search-label = Buscar no portal
header-search-placeholder = Buscar…
search-go = Buscar
search-empty = Digite uma palavra: itens, decisões, tarefas, modelos e pedidos são buscados, sem diferenciar maiúsculas nem acentos.
search-count = { $count ->
    [0] Nada corresponde a “{ $q }”.
    [one] Um resultado para “{ $q }”.
   *[other] { $count } resultados para “{ $q }”.
}
search-items = Itens do catálogo ({ $count })
search-decisions = Decisões ({ $count })
search-tasks = Tarefas pendentes ({ $count })
search-templates = Modelos de autoatendimento ({ $count })
search-requests = Pedidos ({ $count })
search-more = mais { $count }
