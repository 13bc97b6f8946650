//! Self-service: templates rendered from a form become a pull request on the devops monorepo,
//! followed until it is merged or closed.
//!
//! - [`forge`]: the one trait every forge (the local git repository, GitHub, GitLab,
//!   Gitea/Forgejo) implements, and what it exchanges.
//! - [`template`]: template folders (manifest + skeleton), loaded and rendered safely into the
//!   files of a request.

pub mod forge;
pub mod template;
