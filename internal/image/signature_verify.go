//go:build containers_image_openpgp

package image

// The signature checks themselves. containers/image's signature package
// verifies with gpgme (cgo, libgpgme) unless built with the
// containers_image_openpgp tag, which every opm build passes (Makefile,
// .goreleaser.yaml); signature_untagged.go is what a build without it gets.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/containers/image/v5/docker"
	"github.com/containers/image/v5/docker/reference"
	cimage "github.com/containers/image/v5/image"
	"github.com/containers/image/v5/signature"
	"github.com/opencontainers/go-digest"
)

// policyState is the signature policy of a client, loaded on first use.
type policyState struct {
	once sync.Once
	path string            // the policy file, "" when none exists
	pol  *signature.Policy // nil when the policy accepts any registry image
	err  error
}

func (c *Client) policy() (*policyState, error) {
	s := &c.sig
	s.once.Do(func() {
		var data []byte
		s.path, data, s.err = c.policyFile()
		if s.err != nil || s.path == "" {
			return
		}
		// From the file, as podman reads it: relative key paths are
		// relative to the policy's directory.
		pol, err := signature.NewPolicyFromFile(s.path)
		if err != nil {
			s.err = fmt.Errorf("signature policy %s: %w", s.path, err)
			return
		}
		if acceptsAnyRegistryImage(data) {
			return // nothing to check: no need to read signatures
		}
		s.pol = pol
	})
	return s, s.err
}

// SignaturePolicy is the policy file the client's pulls are checked
// against ("" when there is none) and whether it requires more of a
// registry image than insecureAcceptAnything: what a pull by another tool
// must be held to.
func (c *Client) SignaturePolicy() (path string, checks bool, err error) {
	st, err := c.policy()
	if err != nil {
		return "", false, err
	}
	return st.path, st.pol != nil, nil
}

// verifySignature checks the image r names, whose manifest (the one just
// read, so that what is verified is what is pulled) has this content,
// against the signature policy. Signatures are read through containers/image
// as podman and skopeo read them: sigstore attachments where registries.d
// says use-sigstore-attachments, lookaside storage where it names one.
func (c *Client) verifySignature(ctx context.Context, r Ref, manifest []byte) error {
	st, err := c.policy()
	if err != nil {
		return err
	}
	if st.pol == nil || r.named == nil {
		return nil
	}
	// A policy context serves one evaluation at a time; pulls run
	// concurrently, so each gets its own.
	pc, err := signature.NewPolicyContext(st.pol)
	if err != nil {
		return fmt.Errorf("signature policy %s: %w", st.path, err)
	}
	defer func() { _ = pc.Destroy() }() // releases nothing opm still needs
	dgst := digest.FromBytes(manifest)
	// The policy judges the reference as the user wrote it (its scope and
	// signed identity); the manifest and signatures are read by the digest
	// opm pulls, so what is verified is what is used.
	named := r.named
	if _, isDigested := named.(reference.Canonical); !isDigested {
		named = reference.TagNameOnly(named)
	}
	if _, tagged := named.(reference.NamedTagged); tagged {
		if _, digested := named.(reference.Canonical); digested {
			named = reference.TrimNamed(named)
			if named, err = reference.WithDigest(named, dgst); err != nil {
				return fmt.Errorf("verify %s: %w", r, err)
			}
		}
	}
	// containers/image reads the signatures with an HTTP client of its
	// own, without opm's stall and rate checks: its whole reading is held
	// to what one request of opm's may take at most.
	bound := c.opts.requestBound()
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	policyRef, err := docker.NewReference(named)
	if err != nil {
		return fmt.Errorf("verify %s: %w", r, err)
	}
	src, err := policyRef.NewImageSource(ctx, c.signatureSystemContext(r))
	if err != nil {
		return fmt.Errorf("verify the signatures of %s: %w", r, signatureTimeout(ctx, bound, err))
	}
	defer func() { _ = src.Close() }() // read-only
	allowed, err := pc.IsRunningImageAllowed(ctx, cimage.UnparsedInstance(src, &dgst))
	err = signatureTimeout(ctx, bound, err)
	if !allowed || err != nil {
		if err == nil {
			err = errors.New("no reason given")
		}
		return fmt.Errorf("pull %s (%s): %w %s: %v", r, dgst, ErrSignature, st.path, err)
	}
	return nil
}

// signatureTimeout says so when reading the signatures ran out of time.
func signatureTimeout(ctx context.Context, bound time.Duration, err error) error {
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("the registry did not serve them within %s (--%s, --%s): %w", bound.Round(time.Second), FlagTimeout, FlagRetries, err)
	}
	return err
}
