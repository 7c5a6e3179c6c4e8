# gpuledger for the cluster: the in-cluster CronJob (deploy/cronjob.yaml) runs this image.
#
#   docker build --build-arg GPULEDGER_GIT_COMMIT="$(git rev-parse HEAD)" -t gpuledger .
#
# Two stages. The build stage compiles gpuledger with `--locked` on Alpine (musl, so the binary is
# static) and downloads the kustomize and Helm of scripts/tool-versions.env, the versions the tests
# render with, as their upstream release archives, each checked against the SHA-256 written there;
# so the job can render a GitOps repository too. The run stage is distroless `static` as the
# non-root user 65532: no shell, no package manager, nothing writable but the volumes the pod
# mounts (run it with a read-only root filesystem and an emptyDir at /tmp, as the CronJob does).
# Pin both base images by digest in your own build (`FROM image:tag@sha256:…`).

FROM rust:1.89-alpine3.22 AS build
SHELL ["/bin/ash", "-eo", "pipefail", "-c"]
# The C parts (libgit2, ring) need a C compiler and musl's headers; curl fetches the renderers.
# hadolint ignore=DL3018
RUN apk add --no-cache build-base curl

WORKDIR /out
COPY scripts/tool-versions.env /tmp/tool-versions.env
# The archives' checksums are the ones in scripts/tool-versions.env, not ones fetched beside them.
RUN . /tmp/tool-versions.env \
    && case "$(uname -m)" in \
         x86_64) arch=amd64; kustomize_sum=$KUSTOMIZE_SHA256_AMD64; helm_sum=$HELM_SHA256_AMD64 ;; \
         aarch64) arch=arm64; kustomize_sum=$KUSTOMIZE_SHA256_ARM64; helm_sum=$HELM_SHA256_ARM64 ;; \
         *) echo "no kustomize/Helm checksums for $(uname -m)"; exit 1 ;; \
       esac \
    && curl -fsSLo /tmp/kustomize.tar.gz "https://github.com/kubernetes-sigs/kustomize/releases/download/kustomize%2Fv${KUSTOMIZE_VERSION}/kustomize_v${KUSTOMIZE_VERSION}_linux_${arch}.tar.gz" \
    && curl -fsSLo /tmp/helm.tar.gz "https://get.helm.sh/helm-v${HELM_VERSION}-linux-${arch}.tar.gz" \
    && printf '%s  /tmp/kustomize.tar.gz\n%s  /tmp/helm.tar.gz\n' "$kustomize_sum" "$helm_sum" | sha256sum -c - \
    && mkdir -p /out/bin \
    && tar -xzf /tmp/kustomize.tar.gz -C /out/bin kustomize \
    && tar -xzf /tmp/helm.tar.gz -C /out/bin --strip-components 1 "linux-${arch}/helm" \
    && rm /tmp/kustomize.tar.gz /tmp/helm.tar.gz

WORKDIR /src
COPY Cargo.toml Cargo.lock build.rs ./
COPY src ./src
# No .git in the build context (.dockerignore): the commit for `--version` comes in as an argument.
ARG GPULEDGER_GIT_COMMIT=unknown
RUN GPULEDGER_GIT_COMMIT="$GPULEDGER_GIT_COMMIT" \
    CARGO_PROFILE_RELEASE_STRIP=symbols CARGO_PROFILE_RELEASE_DEBUG=0 \
    cargo build --release --locked \
    && cp target/release/gpuledger /out/bin/gpuledger \
    && /out/bin/gpuledger --version \
    && /out/bin/kustomize version \
    && /out/bin/helm version

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/bin/ /usr/local/bin/
# Helm keeps its cache and configuration under HOME: /tmp, the one writable place (an emptyDir).
ENV HOME=/tmp \
    HELM_CACHE_HOME=/tmp/helm/cache \
    HELM_CONFIG_HOME=/tmp/helm/config \
    HELM_DATA_HOME=/tmp/helm/data
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/gpuledger"]
CMD ["--help"]
