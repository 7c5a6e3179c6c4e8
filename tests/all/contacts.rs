//! Who to call (issue 17 §3): a tenant's contact from its namespaces' annotations or labels, or
//! from `tenancy.contacts`, in the tenant table and — when the fleet is nearly full — in the
//! headline; escaped like every text from the cluster.

use super::support::{fixture, gpuledger, root};

const CLUSTER: &str = "tests/fixtures/contacts/cluster.yaml";

fn run(format: &str, config: Option<&str>) -> String {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = gpuledger(&root());
    cmd.args(["inventory", "--format", format, "--snapshot"])
        .arg(fixture(CLUSTER));
    if let Some(text) = config {
        let path = dir.path().join("c.yaml");
        std::fs::write(&path, text).unwrap();
        cmd.arg("--config").arg(path);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn contacts_come_from_namespace_annotations_and_labels() {
    let r: serde_json::Value = serde_json::from_str(&run("json", None)).unwrap();
    let contacts: Vec<(&str, &serde_json::Value)> = r["tenants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), &t["contacts"]))
        .collect();
    assert_eq!(
        contacts,
        [
            ("chat", &serde_json::json!(["@team-chat <oncall>"])),
            ("search", &serde_json::json!(["search-oncall"])),
        ]
    );
    let full = &r["fleet"]["nearly_full"];
    assert_eq!(full["utilisation"], 1.0);
    assert_eq!(full["tenants"][0]["tenant"], "chat");
    assert_eq!(full["tenants"][0]["share"], 0.75);
}

#[test]
fn the_headline_names_who_to_call_escaped_when_the_fleet_is_nearly_full() {
    let md = run("markdown", None);
    let headline = md.lines().nth(2).unwrap();
    assert_eq!(
        headline,
        "**8** GPUs requested of **8** placeable (100.0% utilisation) on 1 GPU nodes; 0 pending. \
         No GPU pods are pending. Fleet at 100%: **chat** holds 75% — \\@\u{200B}team-chat \
         &lt;oncall&gt;; **search** holds 25% — search-oncall."
    );
    assert!(md.contains("| contact |"), "{md}");
    let table = run("table", None);
    assert!(
        table.contains("Fleet at 100%: chat holds 75% — @team-chat <oncall>"),
        "{table}"
    );

    // The config's contact wins; below the threshold the headline says nothing of contacts.
    let md = run(
        "markdown",
        Some("tenancy:\n  contacts: {chat: \"@acme/chat-leads\"}\n"),
    );
    assert!(
        md.contains("**chat** holds 75% — \\@\u{200B}acme/chat-leads;"),
        "{md}"
    );
    let md = run("markdown", Some("tenancy:\n  contacts_above: 1.01\n"));
    assert!(!md.contains("Fleet at"), "{md}");
    // The contact column stays, as who to call is useful whatever the load.
    assert!(md.contains("search-oncall"), "{md}");
}

#[test]
fn no_contact_known_is_said_not_left_blank() {
    let md = run(
        "markdown",
        Some("tenancy:\n  contact_keys: [nothing-has-this]\n"),
    );
    assert!(
        md.contains(
            "**chat** holds 75% (no contact known); **search** holds 25% (no contact known)."
        ),
        "{md}"
    );
    assert!(!md.contains("| contact |"), "{md}");
}

#[test]
fn the_pull_request_check_names_who_to_call_for_the_tenants_it_moves() {
    let r = super::check::repo_with_feature_branch();
    let cfg = r.path().join("contacts.yaml");
    // The repository's own config (its repo URL) with contacts added.
    let own = std::fs::read_to_string(r.path().join(".gpuledger.yaml")).unwrap();
    std::fs::write(
        &cfg,
        format!(
            "{own}tenancy:\n  contacts: {{research: \"@acme/research\", batch: \"@acme/batch\"}}\n"
        ),
    )
    .unwrap();
    let run = |format: &str| {
        let out = gpuledger(r.path())
            .args([
                "check", "--repo", ".", "--base", "main", "--head", "feature",
            ])
            .args(["--now", "2026-11-30", "--format", format, "--config"])
            .arg(&cfg)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let j: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    let contacts: Vec<(&str, &serde_json::Value)> = j["check"]["tenants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), &t["contacts"]))
        .collect();
    // Only the tenants the change moves carry a contact: batch is unmoved.
    let none = serde_json::Value::Null;
    assert_eq!(
        contacts,
        [
            ("llm-prod", &none),
            ("parked", &none),
            ("research", &serde_json::json!(["@acme/research"])),
            ("auto-ns", &none),
            ("batch", &none),
            ("qwen-ns", &none),
        ]
    );
    let md = run("markdown");
    assert!(
        md.contains("| tenant | base | head | delta | contact |"),
        "{md}"
    );
    assert!(
        md.contains("| research | 0 | 16 | +16 | \\@\u{200B}acme/research |"),
        "{md}"
    );
}
