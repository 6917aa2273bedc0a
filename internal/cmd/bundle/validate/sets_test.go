package validate_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
)

// TestBundleValidateRuleSets: the opt-in sets through the real command.
// The valid bundle is installable by OLM v1 but its pull specs are tags.
func TestBundleValidateRuleSets(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	r := o.Run("bundle", "validate", "--select", "olmv1", validBundle)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)

	r = o.Run("bundle", "validate", "--select", "default,supply-chain", validBundle)
	require.Equal(t, exit.OK, r.Code, "warnings pass by default: %s", r.ErrOut)
	assert.Contains(t, r.ErrOut, "image-pinned")
	assert.Contains(t, r.ErrOut, "quay.io/example/example-operator:v0.1.0, not pinned by digest")

	r = o.Run("bundle", "validate", "--select", "supply-chain", "--fail-on", "warning", validBundle)
	require.Equal(t, exit.Failed, r.Code, r.ErrOut)

	r = o.Run("bundle", "validate", "--allowed-registries", "registry.example.com", validBundle)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "image-registry-allowed")
	assert.NotContains(t, r.ErrOut, "image-pinned", "--allowed-registries runs its own rule only")
	r = o.Run("bundle", "validate", "--allowed-registries", "quay.io/example", validBundle)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.NotContains(t, r.ErrOut, "image-registry-allowed")

	r = o.Run("bundle", "validate", "--select", "olmv2", validBundle)
	require.Equal(t, exit.Usage, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, `did you mean "olmv1"`)
}
