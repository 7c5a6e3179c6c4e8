//! The client for one cluster: from `--kubeconfig`, or the default kubeconfig (`$KUBECONFIG`,
//! `~/.kube/config`), or the pod's service account, in kube's order. A `--context` the kubeconfig
//! does not define is named with the ones it does; no configuration at all says what to give
//! instead. Every request through the client has the per-request timeout (a watch's, none between
//! reads); [`register_kubeconfig_secrets`] registers the kubeconfig's credentials for redaction.

use std::path::{Path, PathBuf};

use kube::Client;
use kube::config::{KubeConfigOptions, Kubeconfig};

use super::error::KubeError;
use super::types::{ClusterSource, Origin};

/// A client for the cluster `src` names, the name messages give the cluster, and where it is.
pub(super) async fn client(src: &ClusterSource) -> Result<(Client, String, Origin), KubeError> {
    client_reading(src, Some(src.request_timeout)).await
}

/// [`client`], with `read_timeout` between two reads of an answer: `None` for a watch, which is
/// silent while nothing changes (its own timeout is the server's `timeoutSeconds`).
pub(super) async fn client_reading(
    src: &ClusterSource,
    read_timeout: Option<std::time::Duration>,
) -> Result<(Client, String, Origin), KubeError> {
    let options = KubeConfigOptions {
        context: src.context.clone(),
        ..Default::default()
    };
    let (mut config, context) = match &src.kubeconfig {
        Some(path) => {
            let kc = Kubeconfig::read_from(path).map_err(|source| KubeError::ReadKubeconfig {
                path: path.clone(),
                source,
            })?;
            known_context(&kc, src.context.as_deref(), &path.display().to_string())?;
            let current = src.context.clone().or_else(|| kc.current_context.clone());
            let config = kube::Config::from_custom_kubeconfig(kc, &options)
                .await
                .map_err(|source| KubeError::Kubeconfig {
                    path: path.clone(),
                    source,
                })?;
            (config, current)
        }
        None if src.context.is_some() => {
            if no_config_anywhere() {
                return Err(KubeError::NoConfig);
            }
            if let Ok(kc) = Kubeconfig::read() {
                known_context(&kc, src.context.as_deref(), "the kubeconfig")?;
            }
            (
                kube::Config::from_kubeconfig(&options)
                    .await
                    .map_err(KubeError::DefaultKubeconfig)?,
                src.context.clone(),
            )
        }
        None => {
            let config = kube::Config::infer().await.map_err(|e| {
                if no_config_anywhere() {
                    KubeError::NoConfig
                } else {
                    KubeError::Infer(e)
                }
            })?;
            // `infer` prefers the kubeconfig and falls back to the pod's service account.
            let context = match Kubeconfig::read() {
                Ok(kc) => kc.current_context,
                Err(_) => Some("in-cluster".to_string()),
            };
            (config, context)
        }
    };
    let origin = Origin {
        context,
        server: public_url(&config.cluster_url),
    };
    config.read_timeout = read_timeout;
    config.connect_timeout = Some(src.request_timeout);
    let name = format!(
        "{} ({})",
        src.context
            .clone()
            .unwrap_or_else(|| "current context".into()),
        config.cluster_url
    );
    let client = Client::try_from(config).map_err(KubeError::Client)?;
    Ok((client, name, origin))
}

/// The server's URL as it may be written into a report or a snapshot: scheme, host, port and path,
/// never user info (`https://user:pass@host`) or a query that could carry a token.
fn public_url(uri: &http::Uri) -> String {
    let scheme = uri.scheme_str().unwrap_or("https");
    let host = uri.host().unwrap_or("");
    let port = uri.port_u16().map(|p| format!(":{p}")).unwrap_or_default();
    let path = uri.path().trim_end_matches('/');
    format!("{scheme}://{host}{port}{path}")
}

/// True when kube has nothing to infer a cluster from: no `KUBECONFIG`, no `~/.kube/config`, no
/// in-cluster service account environment.
fn no_config_anywhere() -> bool {
    let kubeconfig_env = std::env::var_os("KUBECONFIG").is_some_and(|v| !v.is_empty());
    let home_config = std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".kube/config"))
        .is_some_and(|p| p.exists());
    let in_cluster = std::env::var_os("KUBERNETES_SERVICE_HOST").is_some();
    !kubeconfig_env && !home_config && !in_cluster
}

/// A context that is not in the kubeconfig is named with the ones that are.
fn known_context(kc: &Kubeconfig, context: Option<&str>, file: &str) -> Result<(), KubeError> {
    let Some(wanted) = context else {
        return Ok(());
    };
    let mut names: Vec<&str> = kc.contexts.iter().map(|c| c.name.as_str()).collect();
    if names.contains(&wanted) {
        return Ok(());
    }
    names.sort_unstable();
    let (file, wanted) = (file.to_string(), wanted.to_string());
    Err(if names.is_empty() {
        KubeError::NoContexts { file, wanted }
    } else {
        KubeError::UnknownContext {
            file,
            wanted,
            known: names.into_iter().map(str::to_string).collect(),
        }
    })
}

/// Registers the credentials of every user in the kubeconfig (the file given, else `$KUBECONFIG`'s
/// files, else `~/.kube/config`) with [`crate::util::redact`], so that no message quotes them. A
/// file that cannot be read is left to the client, which says why.
pub fn register_kubeconfig_secrets(explicit: Option<&Path>) {
    let files: Vec<PathBuf> = match explicit {
        Some(p) => vec![p.to_path_buf()],
        None => match std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty()) {
            Some(v) => std::env::split_paths(&v).collect(),
            None => std::env::var_os("HOME")
                .map(|h| vec![PathBuf::from(h).join(".kube/config")])
                .unwrap_or_default(),
        },
    };
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        let Ok(doc) = serde_saphyr::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        let users = doc.get("users").and_then(serde_json::Value::as_array);
        for u in users.into_iter().flatten() {
            let Some(user) = u.get("user") else { continue };
            for key in [
                "token",
                "password",
                "client-key-data",
                "client-certificate-data",
            ] {
                if let Some(s) = user.get(key).and_then(serde_json::Value::as_str) {
                    crate::util::redact::register(s);
                }
            }
            let provider = user.pointer("/auth-provider/config");
            for key in ["access-token", "id-token", "refresh-token", "client-secret"] {
                if let Some(s) = provider
                    .and_then(|c| c.get(key))
                    .and_then(serde_json::Value::as_str)
                {
                    crate::util::redact::register(s);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::public_url;

    #[test]
    fn the_server_url_never_carries_credentials() {
        let url = |s: &str| public_url(&s.parse::<http::Uri>().unwrap());
        assert_eq!(
            url("https://user:secret@10.0.0.1:6443/?token=x"),
            "https://10.0.0.1:6443"
        );
        assert_eq!(
            url("https://api.example.com/k8s/clusters/c-1/"),
            "https://api.example.com/k8s/clusters/c-1"
        );
        assert_eq!(url("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
    }
}
