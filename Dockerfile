# A container image of verifymcp itself: one static binary, a CA bundle,
# an empty /tmp and a data directory, on scratch. See docs/install.md.
#
# It scans through the Docker engine's socket, mounted by the operator:
#
#   docker run --rm -v /var/run/docker.sock:/var/run/docker.sock \
#     --group-add "$(stat -c %g /var/run/docker.sock)" \
#     -v verifymcp-data:/data verifymcp scan npm:NAME@VERSION
#
# Whoever can use that socket is root on the host: mounting it gives this
# container (and so verifymcp and anything that subverts it) root on the
# host. That is the operator's choice to make, and the sandbox never makes
# it: no container verifymcp starts gets the socket.
#
# Two ways to build it:
#
#   docker build -t verifymcp .
#       from source, in a golang build stage (needs the golang image from a
#       registry, and the Go module proxy);
#   make image
#       from a binary built on this machine, with the target "prebuilt"
#       and dist/image as the context; needs no registry at all.
#
# Either way the binary is a Linux build for the image's architecture,
# which is the engine's, so it is its own helper (sandbox/helper.go).

ARG GO_IMAGE=golang:1.26.8-bookworm

# The image `make image` builds: in its context (dist/image), rootfs/ holds
# the binary, the CA bundle and /tmp, and data/ is the empty data directory. This stage comes first because the classic
# builder (all an engine without BuildKit has) builds every stage up to the
# target: put after the golang stage, it would need the golang image too.
FROM scratch AS prebuilt
ARG VERSION=dev
COPY rootfs/ /
COPY --chown=65532:65532 data/ /data/
ENV VERIFYMCP_DATA_DIR=/data HOME=/data SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
USER 65532:65532
VOLUME /data
LABEL org.opencontainers.image.title=verifymcp \
      org.opencontainers.image.description="Security scanner for MCP server packages" \
      org.opencontainers.image.version=$VERSION
ENTRYPOINT ["/verifymcp"]
CMD ["--help"]

# From source.
FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -buildid= -X github.com/verifymcp/verifymcp/cmd/verifymcp/cli.Version=${VERSION}" \
      -o /out/rootfs/verifymcp ./cmd/verifymcp \
 && mkdir -p /out/rootfs/tmp /out/rootfs/etc/ssl/certs /out/data \
 && chmod 1777 /out/rootfs/tmp \
 && cp /etc/ssl/certs/ca-certificates.crt /out/rootfs/etc/ssl/certs/

FROM scratch
ARG VERSION=dev
COPY --from=build /out/rootfs/ /
COPY --from=build --chown=65532:65532 /out/data/ /data/
ENV VERIFYMCP_DATA_DIR=/data HOME=/data SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
USER 65532:65532
VOLUME /data
LABEL org.opencontainers.image.title=verifymcp \
      org.opencontainers.image.description="Security scanner for MCP server packages" \
      org.opencontainers.image.version=$VERSION
ENTRYPOINT ["/verifymcp"]
CMD ["--help"]
