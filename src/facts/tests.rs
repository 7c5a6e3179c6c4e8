//! Documents against a small fleet: what is rewritten, what is kept byte for byte, and what is
//! refused.

use super::*;
use crate::analysis::inventory::inventory;
use crate::config::Config;
use crate::report::IncompleteInput;

/// Two 8-GPU nodes; chat holds 8 GPUs and research 4, one pod of research pending.
const FLEET: &str = r#"
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {capacity: {nvidia.com/gpu: "8"}, allocatable: {nvidia.com/gpu: "8"}, conditions: [{type: Ready, status: "True"}]}}
- {apiVersion: v1, kind: Node, metadata: {name: n2}, status: {capacity: {nvidia.com/gpu: "8"}, allocatable: {nvidia.com/gpu: "8"}, conditions: [{type: Ready, status: "True"}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: a, namespace: chat}, spec: {nodeName: n1, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "8"}}}]}, status: {phase: Running}}
- {apiVersion: v1, kind: Pod, metadata: {name: b, namespace: research}, spec: {nodeName: n2, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "4"}}}]}, status: {phase: Running}}
- {apiVersion: v1, kind: Pod, metadata: {name: c, namespace: research}, spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "2"}}}]}, status: {phase: Pending}}
"#;

fn report() -> Report {
    let objects = crate::k8s::read::read_str(FLEET, "fleet.yaml").unwrap();
    inventory(&objects, &Config::default(), vec![]).unwrap()
}

fn eval(text: &str) -> Evaluated {
    let r = report();
    evaluate(
        "doc.md",
        text.as_bytes(),
        &Facts::new(&r, || crate::render::facts::tables(&r)),
    )
    .unwrap()
}

fn count(s: &mut DocsStatus, e: &Evaluated) {
    e.count_into(s);
}

fn fact(path: &str, text: &str) -> String {
    format!("<!-- gpuledger:fact {path} -->{text}<!-- /gpuledger:fact -->")
}

#[test]
fn stale_facts_are_rewritten_and_every_other_byte_is_kept() {
    let doc = format!(
        "\u{feff}# Fleet  \r\n\r\nWe have {} placeable GPUs,\ttrailing \r\n{} requested; {} pending.\n\nno newline at the end",
        fact("fleet.gpus.placeable", "12"),
        fact("fleet.gpus.requested", "12"),
        fact("fleet.gpus.pending", "2")
    );
    let e = eval(&doc);
    let states: Vec<&State> = e.markers.iter().map(|c| &c.state).collect();
    assert_eq!(
        states,
        [&State::Stale("16".into()), &State::Current, &State::Current]
    );
    assert_eq!(e.rewritten(), doc.replacen(">12<", ">16<", 1));
    // Written again, nothing is stale and nothing moves.
    let again = eval(&e.rewritten());
    assert!(!again.stale());
    assert_eq!(again.rewritten(), e.rewritten());
}

#[test]
fn findings_name_the_file_line_and_old_and_new_text() {
    let e = eval(&format!(
        "a\n\nb {} c\n{}\n",
        fact("fleet.gpus.placeable", "503"),
        fact("fleet.utilisation percent", "90%")
    ));
    let f = e.findings();
    assert_eq!(f.len(), 2);
    assert_eq!(
        (f[0].file.as_str(), f[0].line, f[0].marker.as_str()),
        ("doc.md", 3, "fleet.gpus.placeable")
    );
    assert_eq!(
        (f[0].old.as_str(), f[0].new.as_deref()),
        ("503", Some("16"))
    );
    assert_eq!(f[1].marker, "fleet.utilisation (percent)");
    assert_eq!(f[1].new.as_deref(), Some("75.0%"));
}

#[test]
fn an_unknown_value_never_overwrites_the_text() {
    let doc = format!("{} busy\n", fact("fleet.gpus.used", "7"));
    let e = eval(&doc);
    assert!(
        matches!(&e.markers[0].state, State::Unknown(why) if why.contains("no metrics source"))
    );
    assert_eq!(e.rewritten(), doc);
    let f = e.findings();
    assert_eq!((f[0].new.as_ref(), f[0].old.as_str()), (None, "7"));

    // An incomplete report (pods could not be read) confirms nothing: its counts may be short.
    let mut r = report();
    r.complete = false;
    r.incomplete.push(IncompleteInput {
        resource: "pods".into(),
        reason: "list forbidden".into(),
    });
    let doc = format!("{}\n", fact("fleet.gpus.requested", "99"));
    let e = evaluate(
        "doc.md",
        doc.as_bytes(),
        &Facts::new(&r, || crate::render::facts::tables(&r)),
    )
    .unwrap();
    assert!(
        matches!(&e.markers[0].state, State::Unknown(why) if why.contains("pods: list forbidden"))
    );
    assert_eq!(e.rewritten(), doc);
    // A wrong field is still wrong.
    let bad = fact("fleet.gpus.nope", "1");
    assert!(
        evaluate(
            "doc.md",
            bad.as_bytes(),
            &Facts::new(&r, || crate::render::facts::tables(&r))
        )
        .is_err()
    );
}

#[test]
fn a_marker_the_report_cannot_answer_is_an_error_at_its_line() {
    let r = report();
    let cases = [
        (
            format!("x\n{}", fact("fleet.gpus.placable", "1")),
            2,
            "names no field",
        ),
        (
            fact("fleet.gpus.placeable pct", "1"),
            1,
            "unknown format \"pct\"",
        ),
        (
            "\n\n<!-- gpuledger:table tenant --><!-- /gpuledger:table -->".to_string(),
            3,
            "no table named \"tenant\"",
        ),
        (
            fact("fleet.shortage.summary int", "1"),
            1,
            "format int writes numbers",
        ),
    ];
    for (doc, line, says) in cases {
        let e = evaluate(
            "doc.md",
            doc.as_bytes(),
            &Facts::new(&r, || crate::render::facts::tables(&r)),
        )
        .unwrap_err();
        assert_eq!(e.line, Some(line), "{doc}: {e}");
        assert!(e.to_string().contains(says), "{doc}: {e}");
    }
}

#[test]
fn a_document_that_is_not_utf8_is_refused_with_its_line() {
    let r = report();
    let bytes = b"ok\nstill ok\n\xff\xfe <!-- gpuledger:fact fleet.gpus.placeable -->1<!-- /gpuledger:fact -->";
    let e = evaluate(
        "latin1.md",
        bytes,
        &Facts::new(&r, || crate::render::facts::tables(&r)),
    )
    .unwrap_err();
    assert_eq!(e.line, Some(3));
    assert!(e.to_string().contains("is not UTF-8"), "{e}");
}

#[test]
fn tables_are_the_reports_own_with_the_documents_line_endings() {
    let doc = "Tenants:\r\n<!-- gpuledger:table tenants -->\r\nold\r\n<!-- /gpuledger:table -->\r\nend\r\n";
    let e = eval(doc);
    let State::Stale(new) = &e.markers[0].state else {
        panic!("{:?}", e.markers[0].state)
    };
    assert!(new.starts_with("\r\n\r\n| tenant |"), "{new:?}");
    assert!(new.ends_with("|\r\n\r\n"), "{new:?}");
    assert!(!new.replace("\r\n", "").contains('\n'), "{new:?}");
    assert!(new.contains("| chat | 8 |"), "{new:?}");
    let out = e.rewritten();
    assert!(out.starts_with("Tenants:\r\n<!-- gpuledger:table tenants -->\r\n\r\n| tenant"));
    assert!(out.ends_with("|\r\n\r\n<!-- /gpuledger:table -->\r\nend\r\n"));
    assert!(!eval(&out).stale());
    let f = e.findings();
    assert_eq!(f[0].marker, "table tenants");
    assert_eq!(f[0].old, "0 rows");
    assert_eq!(f[0].new.as_deref(), Some("2 rows, 2 new or changed"));
    // A table the report has no rows for says so.
    let e = eval("<!-- gpuledger:table routes --><!-- /gpuledger:table -->");
    assert_eq!(e.markers[0].state, State::Stale("\n\n_None._\n\n".into()));
}

#[test]
fn the_status_counts_documents_markers_stale_and_unknown() {
    let mut s = DocsStatus::default();
    count(&mut s, &eval("nothing marked"));
    count(
        &mut s,
        &eval(&format!(
            "{} {} {}",
            fact("fleet.gpus.placeable", "16"),
            fact("fleet.gpus.requested", "1"),
            fact("fleet.gpus.used", "3")
        )),
    );
    assert_eq!(
        (s.documents, s.markers, s.stale.len(), s.unknown.len()),
        (1, 3, 1, 1)
    );
    assert_eq!(
        s.summary(),
        "1 of 3 marked facts in 1 document is stale; 1 unknown (text kept)"
    );
    assert!(!s.clean());
    assert_eq!(DocsStatus::default().summary(), "No marked facts");
}

#[test]
fn a_value_from_the_cluster_is_escaped_and_cannot_open_a_marker_or_break_a_table() {
    let mut r = report();
    r.tenants[0].name = "<!-- /gpuledger:fact --> | @team\nnext `a".into();
    r.tenants[1].name = "b`".into();
    let doc = format!(
        "| a | {} | {} |\n",
        fact("tenants[0].name", "x"),
        fact("tenants[1].name", "y")
    );
    let e = evaluate(
        "doc.md",
        doc.as_bytes(),
        &Facts::new(&r, || crate::render::facts::tables(&r)),
    )
    .unwrap();
    let State::Stale(new) = &e.markers[0].state else {
        panic!("{:?}", e.markers[0].state)
    };
    assert!(!new.contains('<') && !new.contains('\n'), "{new:?}");
    assert!(new.contains("\\|"), "{new:?}");
    // Written and read back, the document has the same one marker.
    let again = evaluate(
        "doc.md",
        e.rewritten().as_bytes(),
        &Facts::new(&r, || crate::render::facts::tables(&r)),
    )
    .unwrap();
    assert_eq!(again.markers.len(), 2);
    assert_eq!(again.markers[0].state, State::Current);
    assert_eq!(again.markers[1].state, State::Current);
}

#[test]
fn a_fact_that_starts_its_line_is_noted() {
    let mut s = DocsStatus::default();
    count(
        &mut s,
        &eval(&format!(
            "text\n{} GPUs\n   {} x\nand {}\n<!-- gpuledger:table tenants -->\n<!-- /gpuledger:table -->\n",
            fact("fleet.gpus.placeable", "16"),
            fact("fleet.gpus.placeable", "16"),
            fact("fleet.gpus.placeable", "16")
        )),
    );
    assert_eq!(s.warnings.len(), 2, "{:?}", s.warnings);
    assert!(s.warnings[0].starts_with("doc.md:2: this fact starts its line"));
    assert!(s.warnings[1].starts_with("doc.md:3:"));
}

#[test]
fn a_summary_with_unknowns_does_not_say_all_match() {
    let mut s = DocsStatus::default();
    count(
        &mut s,
        &eval(&format!(
            "a {} b {}",
            fact("fleet.gpus.placeable", "16"),
            fact("fleet.gpus.used", "3")
        )),
    );
    assert_eq!(
        s.summary(),
        "1 of 2 marked facts in 1 document match the report; 1 unknown (text kept)"
    );
}
