-- What a request is: 'template', files rendered from a self-service template into a new
-- directory; or 'catalog_change', an admin's change of one catalog item's state, qualifier and
-- evidence in its catalog file (see docs/catalog-changes.md). Existing rows are templates.
alter table request add column kind text not null default 'template'
    check (kind in ('template', 'catalog_change'));
