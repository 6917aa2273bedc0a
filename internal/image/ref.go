package image

import (
	"errors"
	"fmt"
	"strings"

	"github.com/containers/image/v5/docker/reference"
)

// Transport names where an image lives.
type Transport string

// The transports opm understands, named as containers/image and skopeo name them.
const (
	TransportRegistry          Transport = "docker"
	TransportOCI               Transport = "oci"
	TransportOCIArchive        Transport = "oci-archive"
	TransportDockerArchive     Transport = "docker-archive"
	TransportContainersStorage Transport = "containers-storage"
)

// ErrContainersStorage is returned for containers-storage: references by builds
// without container storage support (the containers_image_storage_stub tag).
var ErrContainersStorage = errors.New("containers-storage: is not supported by this build of opm; " +
	"export the image first, e.g. `podman push IMAGE oci-archive:/tmp/image.tar`, and use oci-archive:/tmp/image.tar")

// Ref is a parsed image reference.
type Ref struct {
	Transport Transport
	// Name is the normalized registry reference (registry.example/repo:tag or
	// repo@sha256:...) for TransportRegistry; for docker-archive it is the
	// optional reference inside the archive.
	Name string
	// Path is the directory (oci:) or file (oci-archive:, docker-archive:).
	Path string
	// Tag is the image name inside an OCI layout or archive ("" picks the only image).
	Tag string

	input string
	named reference.Named
}

// String is the reference as the user wrote it.
func (r Ref) String() string {
	if r.input != "" {
		return r.input
	}
	return r.Canonical()
}

// Canonical is the reference in transport:details form, as skopeo accepts it.
func (r Ref) Canonical() string {
	switch r.Transport {
	case TransportRegistry:
		return "docker://" + r.Name
	case TransportOCI, TransportOCIArchive:
		if r.Tag != "" {
			return string(r.Transport) + ":" + r.Path + ":" + r.Tag
		}
		return string(r.Transport) + ":" + r.Path
	case TransportDockerArchive:
		if r.Name != "" {
			return string(r.Transport) + ":" + r.Path + ":" + r.Name
		}
		return string(r.Transport) + ":" + r.Path
	default:
		return string(r.Transport) + ":" + r.Path
	}
}

// Registry is the registry host[:port] of a registry reference.
func (r Ref) Registry() string {
	if r.named == nil {
		return ""
	}
	return reference.Domain(r.named)
}

// Repository is host/path of a registry reference, without tag or digest.
func (r Ref) Repository() string {
	if r.named == nil {
		return ""
	}
	return r.named.Name()
}

var localTransports = []Transport{TransportOCIArchive, TransportOCI, TransportDockerArchive, TransportContainersStorage}

// ParseReference parses an image reference: a bare registry name or
// docker://NAME, oci:DIR[:TAG], oci-archive:FILE[:TAG], docker-archive:FILE[:NAME],
// or containers-storage:NAME (rejected by this build).
func ParseReference(s string) (Ref, error) {
	if s == "" {
		return Ref{}, errors.New("empty image reference")
	}
	if rest, ok := strings.CutPrefix(s, "docker://"); ok {
		return parseRegistry(s, rest)
	}
	for _, t := range localTransports {
		rest, ok := strings.CutPrefix(s, string(t)+":")
		if !ok {
			continue
		}
		if t == TransportContainersStorage {
			return Ref{}, fmt.Errorf("image reference %q: %w", s, ErrContainersStorage)
		}
		// Like containers/image, the first colon separates the path from the
		// tag, so paths cannot contain colons.
		path, tag, _ := strings.Cut(rest, ":")
		if path == "" {
			return Ref{}, fmt.Errorf("image reference %q: no path after %q", s, string(t)+":")
		}
		r := Ref{Transport: t, Path: path, input: s}
		switch t {
		case TransportDockerArchive:
			if tag != "" {
				named, err := reference.ParseNormalizedNamed(tag)
				if err != nil {
					return Ref{}, fmt.Errorf("image reference %q: invalid name %q inside the archive: %w", s, tag, err)
				}
				if _, isDigest := named.(reference.Digested); isDigest {
					return Ref{}, fmt.Errorf("image reference %q: a docker-archive name must be a tag, not a digest", s)
				}
				r.Name = reference.TagNameOnly(named).String()
			}
		default:
			if tag != "" && !validLayoutTag(tag) {
				return Ref{}, fmt.Errorf("image reference %q: invalid tag %q", s, tag)
			}
			r.Tag = tag
		}
		return r, nil
	}
	if strings.HasPrefix(s, "docker:") {
		return Ref{}, fmt.Errorf("image reference %q: registry references are written docker://NAME", s)
	}
	return parseRegistry(s, s)
}

func parseRegistry(input, name string) (Ref, error) {
	named, err := reference.ParseNormalizedNamed(name)
	if err != nil {
		return Ref{}, fmt.Errorf("image reference %q: %w", input, err)
	}
	named = reference.TagNameOnly(named)
	return Ref{Transport: TransportRegistry, Name: named.String(), input: input, named: named}, nil
}

// validLayoutTag follows the OCI ref.name annotation grammar loosely: no
// whitespace, slashes allowed (as in org.opencontainers.image.ref.name).
func validLayoutTag(tag string) bool {
	for _, c := range tag {
		if c <= ' ' || c == 0x7f {
			return false
		}
	}
	return true
}

// LooksLikeReference tells whether s is plausibly meant as an image reference
// rather than a mistyped path: it has a transport prefix, or it parses as a
// registry name that has a registry host (a dot, a port or localhost in its
// first component), a tag or a digest. "bundles/etcd" does not look like one;
// "quay.io/org/etcd", "etcd:0.9.4" and "localhost:5000/etcd" do.
func LooksLikeReference(s string) bool {
	if strings.HasPrefix(s, "docker://") {
		return true
	}
	for _, t := range localTransports {
		if strings.HasPrefix(s, string(t)+":") {
			return true
		}
	}
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~") {
		return false
	}
	named, err := reference.ParseNormalizedNamed(s)
	if err != nil {
		return false
	}
	first, _, hasSlash := strings.Cut(s, "/")
	if hasSlash && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return true
	}
	if _, ok := named.(reference.Tagged); ok {
		return true
	}
	_, ok := named.(reference.Digested)
	return ok
}
