//! Size limits shared by the sandbox ASPSP (what it reads) and the console (what it explains
//! when a request is refused for its size).

/// Largest request body the sandbox reads, bytes (1 MiB). Not stated by the interface
/// document; a sandbox limit. The sandbox refuses a longer body, and the console names this
/// limit when the server closed the connection while a body was being written
/// ([`crate::client::tls::describe_send_error_with_body`]).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;
