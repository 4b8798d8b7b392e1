//! The sandbox's PostgreSQL back end (issue 21): the test cluster harness
//! ([`crate::common::pg`]) and the store against PostgreSQL.

use crate::common::pg::PgCluster;

/// The harness starts a private cluster (as `nobody` when run as root) and hands out empty
/// databases reachable over loopback TCP; skipped where PostgreSQL is absent (never in CI).
#[test]
fn the_harness_starts_a_private_cluster_and_hands_out_databases() {
    let Some(cluster) = PgCluster::get() else {
        return;
    };
    let a = cluster.database();
    let b = cluster.database();
    assert_ne!(a, b);
    assert!(a.starts_with("postgres://psd2@127.0.0.1:"), "{a}");
    let tcp = std::net::TcpStream::connect(("127.0.0.1", cluster.port));
    assert!(tcp.is_ok(), "the cluster listens on 127.0.0.1:{}", cluster.port);
}
