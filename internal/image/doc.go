// Package image is opm's one door to container images: it parses references
// for every supported transport, opens images to read their manifest, config,
// labels and flattened filesystem, builds deterministic layers and images, and
// writes images to registries, OCI layouts and archives.
//
// The work is split between two libraries (see docs/images.md):
// containers/image reads the user's configuration (registries.conf mirrors,
// insecure and blocked registries, certs.d) and the local transports (oci:,
// oci-archive:, docker-archive:); go-containerregistry speaks the registry
// protocol (with retries, HEAD checks and cross-repository mounts) and builds
// layers and images. Layer contents are always unpacked by this package's own
// reader, which refuses hostile tar entries.
package image
