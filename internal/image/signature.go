package image

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/containers/image/v5/docker"
	"github.com/containers/image/v5/docker/reference"
	cimage "github.com/containers/image/v5/image"
	"github.com/containers/image/v5/signature"
	"github.com/containers/image/v5/types"
	"github.com/opencontainers/go-digest"
)

// ErrSignature is a pull that the signature policy refuses.
var ErrSignature = errors.New("refused by the signature policy")

// SystemPolicyPath is the system-wide containers policy, read when the
// user has none of their own ($HOME/.config/containers/policy.json), as
// podman and skopeo read it.
const SystemPolicyPath = "/etc/containers/policy.json"

// policyState is the signature policy of a client, loaded on first use.
type policyState struct {
	once sync.Once
	path string            // the policy file, "" when none exists
	pol  *signature.Policy // nil when the policy accepts any registry image
	err  error
}

// PolicyPath returns the containers policy file a pull is checked against:
// --signature-policy, else $HOME/.config/containers/policy.json, else
// /etc/containers/policy.json; "" when none of them exists.
func PolicyPath(flag string) (string, error) { return findPolicy(flag, SystemPolicyPath) }

func findPolicy(flag, system string) (string, error) {
	if flag != "" {
		if _, err := os.Stat(flag); err != nil {
			return "", fmt.Errorf("--%s: %w", FlagSignaturePolicy, err)
		}
		return flag, nil
	}
	var candidates []string
	if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, filepath.Join(home, ".config", "containers", "policy.json"))
	}
	candidates = append(candidates, system)
	for _, p := range candidates {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", nil
}

func (c *Client) policy() (*policyState, error) {
	s := &c.sig
	s.once.Do(func() {
		system := SystemPolicyPath
		if c.systemPolicy != "" {
			system = c.systemPolicy
		}
		s.path, s.err = findPolicy(c.opts.SignaturePolicy, system)
		if s.err != nil {
			return
		}
		if s.path == "" {
			c.warn(fmt.Sprintf("no containers signature policy (%s or ~/.config/containers/policy.json): image signatures are not verified (insecureAcceptAnything); give one with --%s",
				SystemPolicyPath, FlagSignaturePolicy))
			return
		}
		data, err := os.ReadFile(s.path)
		if err != nil {
			s.err = fmt.Errorf("signature policy: %w", err)
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

// acceptsAnyRegistryImage reports whether every requirement that can apply
// to a registry image (the default and the docker transport's scopes) is
// insecureAcceptAnything. The file has already been parsed by the policy
// code, so errors here cannot happen; they answer false (check as usual).
func acceptsAnyRegistryImage(data []byte) bool {
	type req struct {
		Type string `json:"type"`
	}
	var p struct {
		Default    []req                       `json:"default"`
		Transports map[string]map[string][]req `json:"transports"`
	}
	if json.Unmarshal(data, &p) != nil {
		return false
	}
	reqs := p.Default
	for _, scope := range p.Transports["docker"] {
		reqs = append(reqs, scope...)
	}
	for _, r := range reqs {
		if r.Type != "insecureAcceptAnything" {
			return false
		}
	}
	return true
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
	policyRef, err := docker.NewReference(named)
	if err != nil {
		return fmt.Errorf("verify %s: %w", r, err)
	}
	src, err := policyRef.NewImageSource(ctx, c.signatureSystemContext(r))
	if err != nil {
		return fmt.Errorf("verify the signatures of %s: %w", r, err)
	}
	defer func() { _ = src.Close() }() // read-only
	allowed, err := pc.IsRunningImageAllowed(ctx, cimage.UnparsedInstance(src, &dgst))
	if !allowed || err != nil {
		if err == nil {
			err = errors.New("no reason given")
		}
		return fmt.Errorf("pull %s (%s): %w %s: %v", r, dgst, ErrSignature, st.path, err)
	}
	return nil
}

// signatureSystemContext is the client's settings for containers/image:
// TLS as opm's flags say, and the credentials opm resolved for the
// repository (so that both readers use the same ones).
func (c *Client) signatureSystemContext(r Ref) *types.SystemContext {
	sys := *c.sys
	sys.RegistriesDirPath = c.opts.RegistriesDir
	if c.opts.UseHTTP || c.opts.SkipTLSVerify {
		sys.DockerInsecureSkipTLSVerify = types.OptionalBoolTrue
	}
	if cred, err := c.credentials(reference.TrimNamed(r.named).Name()); err == nil && !cred.Empty() {
		sys.DockerAuthConfig = &types.DockerAuthConfig{Username: cred.Username, Password: cred.Password, IdentityToken: cred.IdentityToken}
	}
	return &sys
}
