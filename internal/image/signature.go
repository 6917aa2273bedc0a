package image

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/containers/image/v5/docker/reference"
	"github.com/containers/image/v5/types"
)

// ErrSignature is a pull that the signature policy refuses.
var ErrSignature = errors.New("refused by the signature policy")

// SystemPolicyPath is the system-wide containers policy, read when the
// user has none of their own ($HOME/.config/containers/policy.json), as
// podman and skopeo read it.
const SystemPolicyPath = "/etc/containers/policy.json"

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

// policyFile finds and reads the client's signature policy; the path is ""
// when there is none, which is said once on stderr (nothing is verified).
func (c *Client) policyFile() (string, []byte, error) {
	system := SystemPolicyPath
	if c.systemPolicy != "" {
		system = c.systemPolicy
	}
	path, err := findPolicy(c.opts.SignaturePolicy, system)
	if err != nil {
		return "", nil, err
	}
	if path == "" {
		c.warn(fmt.Sprintf("no containers signature policy (%s or ~/.config/containers/policy.json): image signatures are not verified (insecureAcceptAnything); give one with --%s",
			SystemPolicyPath, FlagSignaturePolicy))
		return "", nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", nil, fmt.Errorf("signature policy: %w", err)
	}
	return path, data, nil
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

// signatureSystemContext is the client's settings for containers/image:
// TLS as opm's flags say, and the credentials opm resolved for the
// repository (so that both readers use the same ones).
func (c *Client) signatureSystemContext(r Ref) *types.SystemContext {
	sys := *c.sys
	sys.RegistriesDirPath = c.opts.RegistriesDir
	if skip, useHTTP := c.opts.side(false); useHTTP || skip {
		sys.DockerInsecureSkipTLSVerify = types.OptionalBoolTrue
	}
	if cred, err := c.credentials(reference.TrimNamed(r.named).Name()); err == nil && !cred.Empty() {
		sys.DockerAuthConfig = &types.DockerAuthConfig{Username: cred.Username, Password: cred.Password, IdentityToken: cred.IdentityToken}
	}
	return &sys
}
