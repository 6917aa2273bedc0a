//go:build !containers_image_openpgp

package image

// A build without the containers_image_openpgp tag (a plain `go build` or
// `go vet`) has no signature verifier: containers/image would need gpgme
// (cgo, libgpgme) for it. Such a build still honours the policy: a policy
// that accepts any registry image changes nothing, and any other refuses
// the pull, saying how to build an opm that verifies.

import (
	"context"
	"fmt"
	"sync"
)

// policyState is the signature policy of a client, loaded on first use.
type policyState struct {
	once  sync.Once
	path  string // the policy file, "" when none exists
	needs bool   // the policy requires more than insecureAcceptAnything
	err   error
}

func (c *Client) policy() (*policyState, error) {
	s := &c.sig
	s.once.Do(func() {
		var data []byte
		s.path, data, s.err = c.policyFile()
		s.needs = s.err == nil && s.path != "" && !acceptsAnyRegistryImage(data)
	})
	return s, s.err
}

// SignaturePolicy is the policy file the client's pulls are checked
// against ("" when there is none) and whether it requires more of a
// registry image than insecureAcceptAnything.
func (c *Client) SignaturePolicy() (path string, checks bool, err error) {
	st, err := c.policy()
	if err != nil {
		return "", false, err
	}
	return st.path, st.needs, nil
}

func (c *Client) verifySignature(_ context.Context, r Ref, _ []byte) error {
	st, err := c.policy()
	if err != nil || !st.needs || r.named == nil {
		return err
	}
	return fmt.Errorf("pull %s: %w %s: this opm was built without the containers_image_openpgp build tag and cannot verify the signatures the policy requires (build it with `make build`)", r, ErrSignature, st.path)
}
