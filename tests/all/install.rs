//! The install script the composite action runs (scripts/install-gpuledger.sh), against a local
//! HTTP server serving fake releases: a good one (installed), one whose asset does not match its
//! SHA256SUMS (refused, exit 2, nothing installed), one without an asset for this platform and one
//! not released at all (exit 3: the action builds from source and says so). The script runs as the
//! action runs it, with bash, curl, tar and sha256sum from the machine.

use std::path::Path;
use std::process::{Command, Output};

use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::root;

const VERSION: &str = "9.8.7";
const TARGET: &str = "x86_64-unknown-linux-musl";

fn asset_name() -> String {
    format!("gpuledger-v{VERSION}-{TARGET}.tar.gz")
}

/// A release archive holding a stand-in `gpuledger` that reports `says` as its version.
fn archive(dir: &Path, says: &str) -> Vec<u8> {
    let stage = dir.join("stage");
    std::fs::create_dir_all(&stage).unwrap();
    let bin = stage.join("gpuledger");
    std::fs::write(&bin, format!("#!/bin/sh\necho '{says}'\n")).unwrap();
    let ok = Command::new("chmod").arg("755").arg(&bin).status().unwrap();
    assert!(ok.success());
    let out = dir.join("asset.tar.gz");
    let ok = Command::new("tar")
        .arg("-czf")
        .arg(&out)
        .arg("-C")
        .arg(&stage)
        .arg("gpuledger")
        .status()
        .expect("tar");
    assert!(ok.success());
    std::fs::read(out).unwrap()
}

fn sha256(bytes: &[u8], dir: &Path) -> String {
    let f = dir.join("hash-me");
    std::fs::write(&f, bytes).unwrap();
    let out = Command::new("sha256sum")
        .arg(&f)
        .output()
        .expect("sha256sum");
    String::from_utf8(out.stdout).unwrap()[..64].to_string()
}

/// Serves `files` under `/<release>/`; anything else is a 404, as GitHub answers for a missing
/// asset or release.
async fn serve(server: &MockServer, release: &str, files: Vec<(String, Vec<u8>)>) {
    for (name, body) in files {
        Mock::given(method("GET"))
            .and(path(format!("/{release}/{name}")))
            .respond_with(ResponseTemplate::new(200).set_body_bytes(body))
            .mount(server)
            .await;
    }
}

struct Fixture {
    _rt: tokio::runtime::Runtime,
    server: MockServer,
    dir: tempfile::TempDir,
}

fn releases() -> Fixture {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let good = archive(
        &dir.path().join("good"),
        &format!("gpuledger {VERSION} (commit 0123456789ab)"),
    );
    let other = archive(
        &dir.path().join("other"),
        "gpuledger 0.0.1 (commit fedcba987654)",
    );
    let good_sum = sha256(&good, dir.path());
    let other_sum = sha256(&other, dir.path());
    let name = asset_name();
    let sums = |sum: &str| {
        format!(
            "{sum}  {name}\n{}  gpuledger-v{VERSION}-aarch64-apple-darwin.tar.gz\n",
            "0".repeat(64)
        )
        .into_bytes()
    };
    let server = rt.block_on(async {
        let server = MockServer::start().await;
        serve(
            &server,
            "good",
            vec![
                ("SHA256SUMS".into(), sums(&good_sum)),
                (name.clone(), good.clone()),
            ],
        )
        .await;
        // The asset was swapped after the checksums were published.
        serve(
            &server,
            "tampered",
            vec![
                ("SHA256SUMS".into(), sums(&good_sum)),
                (name.clone(), other.clone()),
            ],
        )
        .await;
        // Checksums and asset agree, but the binary is another version than the one asked for.
        serve(
            &server,
            "wrong-version",
            vec![
                ("SHA256SUMS".into(), sums(&other_sum)),
                (name.clone(), other),
            ],
        )
        .await;
        // Released, but not for this platform.
        serve(
            &server,
            "no-asset",
            vec![("SHA256SUMS".into(), sums(&good_sum))],
        )
        .await;
        // An asset nobody checksummed.
        serve(
            &server,
            "unlisted",
            vec![
                (
                    "SHA256SUMS".into(),
                    format!("{good_sum}  something-else.tar.gz\n").into_bytes(),
                ),
                (name.clone(), good),
            ],
        )
        .await;
        server
    });
    // The action's source: only Cargo.toml matters to the script.
    std::fs::write(
        dir.path().join("Cargo.toml"),
        format!("[package]\nname = \"gpuledger\"\nversion = \"{VERSION}\"\nrepository = \"https://github.com/acme/gpuledger\"\n\n[dependencies]\nserde = {{ version = \"1\" }}\n"),
    )
    .unwrap();
    Fixture {
        _rt: rt,
        server,
        dir,
    }
}

fn install(f: &Fixture, release: &str, into: &str) -> Output {
    Command::new("bash")
        .arg(root().join("scripts/install-gpuledger.sh"))
        .arg(f.dir.path().join(into))
        .env("GPULEDGER_SOURCE", f.dir.path())
        .env(
            "GPULEDGER_RELEASE_URL",
            format!("{}/{release}", f.server.uri()),
        )
        .env("GPULEDGER_TARGET", TARGET)
        .output()
        .expect("run bash")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_good_release_is_downloaded_verified_and_installed() {
    let f = releases();
    let out = install(&f, "good", "root");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bin = f.dir.path().join("root/bin/gpuledger");
    let says = Command::new(&bin).arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&says.stdout).trim(),
        format!("gpuledger {VERSION} (commit 0123456789ab)")
    );
    assert!(
        stderr(&out).contains("verified against SHA256SUMS"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_tampered_release_fails_and_installs_nothing() {
    let f = releases();
    for (release, why) in [
        ("tampered", "checksum mismatch"),
        ("unlisted", "lists no gpuledger-v9.8.7"),
        ("wrong-version", "not gpuledger 9.8.7"),
    ] {
        let out = install(&f, release, release);
        assert_eq!(out.status.code(), Some(2), "{release}: {}", stderr(&out));
        assert!(stderr(&out).contains(why), "{release}: {}", stderr(&out));
        assert!(
            !f.dir.path().join(release).join("bin/gpuledger").exists(),
            "{release}: installed anyway"
        );
    }
}

#[test]
fn a_missing_asset_or_release_asks_for_the_source_build() {
    let f = releases();
    for release in ["no-asset", "not-released"] {
        let out = install(&f, release, release);
        assert_eq!(out.status.code(), Some(3), "{release}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("has no release file"),
            "{release}: {}",
            stderr(&out)
        );
        assert!(!f.dir.path().join(release).join("bin/gpuledger").exists());
    }
}

#[test]
fn the_default_download_url_comes_from_the_pinned_source() {
    // No release URL given: the script names the repository of Cargo.toml and the version's tag.
    // An unreachable host keeps the test offline; what matters is the URL it says it tried.
    let f = releases();
    let out = Command::new("bash")
        .arg(root().join("scripts/install-gpuledger.sh"))
        .arg(f.dir.path().join("default"))
        .env("GPULEDGER_SOURCE", f.dir.path())
        .env("GPULEDGER_TARGET", TARGET)
        .env("HTTPS_PROXY", "http://127.0.0.1:9")
        .env("https_proxy", "http://127.0.0.1:9")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "https://github.com/acme/gpuledger/releases/download/v{VERSION}"
        )),
        "{}",
        stderr(&out)
    );
}
