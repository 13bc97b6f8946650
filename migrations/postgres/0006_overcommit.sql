-- An admin who approves a request asking for more GPUs than its cluster has free must say why:
-- the reason is kept on the request (the pull request's body shows it) and on the timeline row
-- of the approval. Null for every other request and transition.
alter table request add column overcommit_reason text;
alter table request_transition add column overcommit_reason text;
