-- The version of its template a template request was rendered with (the manifest's `version`,
-- else a digest of the template's files): a resource whose template has changed since is
-- offered the update. Null for requests made before versions were recorded.
alter table request add column template_version text;
