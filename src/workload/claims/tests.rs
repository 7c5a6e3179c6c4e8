use std::collections::BTreeMap;

use super::*;
use crate::k8s::read::read_str;

fn objects(yaml: &str) -> Vec<Object> {
    read_str(yaml, "t.yaml").unwrap()
}

/// The devices of the first claim or template of `yaml`, with the rest of it as context.
fn asks(yaml: &str) -> Devices {
    let objs = objects(yaml);
    let dra = Dra::new(&objs);
    for o in &objs {
        match &o.body {
            Body::Claim(c) => return dra.claim(o, c).unwrap().0,
            Body::ClaimTemplate(t) => return dra.spec(&t.spec, "t").unwrap(),
            _ => {}
        }
    }
    panic!("no claim in {yaml}")
}

const CLAIM: &str = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: ml}\nspec:\n  devices:\n    requests:\n";

fn claim(requests: &str) -> String {
    format!("{CLAIM}{requests}")
}

#[test]
fn count_defaults_to_one_and_requests_add_up() {
    let d = asks(&claim(
        "    - {name: a, exactly: {deviceClassName: gpu.nvidia.com}}\n    - {name: b, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}\n",
    ));
    assert_eq!(d.gpus.whole, 3);
    assert!(d.unknown.is_empty() && d.other.is_empty() && d.more.is_zero());
}

#[test]
fn v1beta1_requests_carry_their_fields_on_the_request() {
    let yaml = claim("    - {name: gpu, deviceClassName: gpu.nvidia.com, count: 2}\n")
        .replace("resource.k8s.io/v1\n", "resource.k8s.io/v1beta1\n");
    assert_eq!(asks(&yaml).gpus.whole, 2);
}

#[test]
fn mig_by_the_profile_its_selector_names() {
    let d = asks(&claim(
        "    - {name: a, exactly: {deviceClassName: mig.nvidia.com, selectors: [{cel: {expression: \"device.attributes['gpu.nvidia.com'].profile == '1g.5gb'\"}}]}}\n    - {name: b, exactly: {deviceClassName: mig.nvidia.com, count: 2, selectors: [{cel: {expression: 'device.attributes[\"gpu.nvidia.com\"].profile == \"3g.20gb\"'}}]}}\n    - {name: c, exactly: {deviceClassName: mig.nvidia.com}}\n",
    ));
    assert_eq!(d.gpus.whole, 0);
    assert_eq!(
        d.gpus.mig,
        BTreeMap::from([("1g.5gb".into(), 1), ("3g.20gb".into(), 2)])
    );
    assert_eq!(
        d.other,
        BTreeMap::from([("mig.nvidia.com (MIG, profile unknown)".into(), 1)])
    );
}

#[test]
fn admin_access_holds_nothing_and_all_is_unknown_until_allocated() {
    let admin = asks(&claim(
        "    - {name: a, exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All, adminAccess: true}}\n",
    ));
    assert!(admin.is_empty(), "{admin:?}");
    let all = asks(&claim(
        "    - {name: a, exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All}}\n",
    ));
    assert_eq!(all.gpus.whole, 0);
    assert_eq!(
        all.unknown,
        [
            "ResourceClaim ml/c: request a takes every matching gpu.nvidia.com device of a node (allocationMode All), unknown until it is allocated"
        ]
    );
}

#[test]
fn first_available_is_a_range_until_allocated() {
    let d = asks(&claim(
        "    - name: gpu\n      firstAvailable:\n      - {name: big, deviceClassName: gpu.nvidia.com, count: 2}\n      - {name: small, deviceClassName: gpu.nvidia.com}\n      - {name: slice, deviceClassName: mig.nvidia.com, selectors: [{cel: {expression: \"device.attributes['gpu.nvidia.com'].profile == '1g.10gb'\"}}]}\n",
    ));
    // Least: 0 whole (the MIG alternative), 0 MIG (a whole one); most: 2 whole, 1 MIG.
    assert_eq!((d.gpus.whole, d.more.whole), (0, 2));
    assert_eq!(d.more.mig.get("1g.10gb"), Some(&1));
    let same = asks(&claim(
        "    - name: gpu\n      firstAvailable:\n      - {name: a, deviceClassName: gpu.example.com}\n      - {name: b, deviceClassName: gpu.example.com}\n",
    ));
    assert_eq!(same.other, BTreeMap::from([("gpu.example.com".into(), 1)]));
    assert!(same.gpus.is_zero() && same.more.is_zero());
}

#[test]
fn channels_are_not_gpus_and_other_classes_stay_apart() {
    let d = asks(&claim(
        "    - {name: ch, exactly: {deviceClassName: compute-domain-default-channel.nvidia.com}}\n    - {name: x, exactly: {deviceClassName: fpga.example.com, count: 3}}\n",
    ));
    assert!(d.gpus.is_zero());
    assert_eq!(d.other, BTreeMap::from([("fpga.example.com".into(), 3)]));
}

#[test]
fn device_classes_map_by_extended_resource_or_selector() {
    let classes = "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: whole.example}\nspec: {extendedResourceName: nvidia.com/gpu}\n---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: mig-1g-12gb.gpu.nvidia.com}\nspec:\n  selectors:\n  - cel: {expression: \"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig' && device.attributes['gpu.nvidia.com'].profile == '1g.12gb'\"}\n---\n";
    let d = asks(&format!(
        "{classes}{}",
        claim(
            "    - {name: a, exactly: {deviceClassName: whole.example, count: 2}}\n    - {name: b, exactly: {deviceClassName: mig-1g-12gb.gpu.nvidia.com}}\n"
        )
    ));
    assert_eq!(d.gpus.whole, 2);
    assert_eq!(d.gpus.mig.get("1g.12gb"), Some(&1));
}

#[test]
fn a_share_of_a_device_leaves_its_whole_gpus_unknown() {
    let d = asks(&claim(
        "    - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, capacity: {requests: {memory: 4Gi}}}}\n",
    ));
    assert_eq!(d.gpus.whole, 0);
    assert_eq!(
        d.other,
        BTreeMap::from([("gpu.nvidia.com (shared capacity)".into(), 1)])
    );
    assert!(
        d.unknown[0].contains("share (memory 4Gi)"),
        "{:?}",
        d.unknown
    );
}

const SLICE: &str = "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: n1-gpu}\nspec:\n  driver: gpu.nvidia.com\n  nodeName: n1\n  pool: {name: n1, generation: 1, resourceSliceCount: 1}\n  devices:\n  - {name: gpu-0, attributes: {type: {string: gpu}, uuid: {string: GPU-0}}}\n  - {name: gpu-1-mig-1g.10gb-0, attributes: {type: {string: mig}, parentUUID: {string: GPU-1}, profile: {string: 1g.10gb}}}\n---\n";

#[test]
fn an_allocated_claim_holds_its_devices_as_the_slices_publish_them() {
    // `All` asked for every device; the allocation says which. Admin access holds none.
    let d = asks(&format!(
        "{SLICE}{}status:\n  allocation:\n    devices:\n      results:\n      - {{request: a, driver: gpu.nvidia.com, pool: n1, device: gpu-0}}\n      - {{request: a, driver: gpu.nvidia.com, pool: n1, device: gpu-1-mig-1g.10gb-0}}\n      - {{request: m, driver: gpu.nvidia.com, pool: n1, device: gpu-0, adminAccess: true}}\n",
        claim(
            "    - {name: a, exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All}}\n    - {name: m, exactly: {deviceClassName: gpu.nvidia.com, adminAccess: true}}\n"
        )
    ));
    assert_eq!(d.gpus.whole, 1);
    assert_eq!(d.gpus.mig.get("1g.10gb"), Some(&1));
    assert!(d.unknown.is_empty(), "{:?}", d.unknown);
    // Without the slice, the request's class says what the device is; a subrequest's result names
    // the alternative chosen.
    let d = asks(&format!(
        "{}status:\n  allocation:\n    devices:\n      results:\n      - {{request: gpu/small, driver: gpu.nvidia.com, pool: n1, device: gpu-3}}\n",
        claim(
            "    - name: gpu\n      firstAvailable:\n      - {name: big, deviceClassName: gpu.nvidia.com, count: 2}\n      - {name: small, deviceClassName: gpu.nvidia.com}\n"
        )
    ));
    assert_eq!((d.gpus.whole, d.more.whole), (1, 0));
}

#[test]
fn cel_values_are_read_only_when_unambiguous() {
    let sel = |e: &str| {
        vec![DeviceSelector {
            cel: Some(crate::k8s::dra::CelSelector {
                expression: e.into(),
            }),
        }]
    };
    assert_eq!(
        cel_value(&sel("d.profile == '1g.5gb'"), ".profile").as_deref(),
        Some("1g.5gb")
    );
    assert_eq!(
        cel_value(&sel("d.profile=='a' || d.profile == 'b'"), ".profile"),
        None
    );
    assert_eq!(cel_value(&sel("d.profileName == 'a'"), ".profile"), None);
    assert_eq!(cel_value(&sel("d.profile != 'a'"), ".profile"), None);
}

const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml, uid: pod-uid}\nspec:\n  containers: [{name: c, resources: {claims: [{name: gpu}]}}]\n";

#[test]
fn a_pod_gets_its_template_claim_or_the_claim_made_for_it() {
    let template = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: two, namespace: ml}\nspec:\n  spec:\n    devices:\n      requests:\n      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}\n---\n";
    let pod = format!("{POD}  resourceClaims: [{{name: gpu, resourceClaimTemplateName: two}}]\n");
    let objs = objects(&format!("{template}{pod}"));
    let dra = Dra::new(&objs);
    let Body::Pod(p) = &objs[1].body else {
        panic!()
    };
    let c = dra
        .pod("ml", &p.spec, Some((&p.status, Some("pod-uid"))))
        .unwrap();
    assert_eq!(
        (c.own.gpus.whole, c.claims.len(), c.claims[0].allocated),
        (2, 1, None)
    );
    // The claim made for it (found by its owner and annotation) holds one GPU: that counts.
    let made = format!(
        "{template}{pod}---\n{}",
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: p-gpu-x\n  namespace: ml\n  annotations: {resource.kubernetes.io/pod-claim-name: gpu}\n  ownerReferences: [{apiVersion: v1, kind: Pod, name: p, uid: pod-uid, controller: true}]\nspec:\n  devices:\n    requests:\n    - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}\nstatus:\n  allocation:\n    devices:\n      results:\n      - {request: gpu, driver: gpu.nvidia.com, pool: n1, device: gpu-0}\n"
    );
    let objs = objects(&made);
    let dra = Dra::new(&objs);
    let Body::Pod(p) = &objs[1].body else {
        panic!()
    };
    let c = dra
        .pod("ml", &p.spec, Some((&p.status, Some("pod-uid"))))
        .unwrap();
    assert_eq!((c.own.gpus.whole, c.claims[0].allocated), (1, Some(true)));
    assert!(!is_shared_claim(&objs[2]));
    // A template that is not in the input is unknown, never zero.
    let alone = objects(&pod);
    let Body::Pod(p) = &alone[0].body else {
        panic!()
    };
    let c = Dra::new(&alone).pod("ml", &p.spec, None).unwrap();
    assert_eq!(
        c.own.unknown,
        ["ResourceClaimTemplate ml/two is not in the input"]
    );
}

#[test]
fn shared_claims_and_channel_templates() {
    let yaml = format!(
        "{}---\napiVersion: resource.nvidia.com/v1beta1\nkind: ComputeDomain\nmetadata: {{name: cd, namespace: ml}}\nspec:\n  numNodes: 2\n  channel: {{resourceClaimTemplate: {{name: cd-channel}}}}\n---\n{POD}  resourceClaims:\n  - {{name: gpu, resourceClaimName: c}}\n  - {{name: ch, resourceClaimTemplateName: cd-channel}}\n",
        claim("    - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}\n")
    );
    let objs = objects(&yaml);
    let dra = Dra::new(&objs);
    let Body::Pod(p) = &objs[2].body else {
        panic!()
    };
    let c = dra.pod("ml", &p.spec, None).unwrap();
    assert!(c.own.is_empty(), "{:?}", c.own);
    assert_eq!(c.shared, [0]);
    assert!(is_shared_claim(&objs[0]));
}
