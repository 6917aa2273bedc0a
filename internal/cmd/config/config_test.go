package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tree is a small command tree: root (--config) → noun → verb
// (--fail-on, --list-rules as an action).
func tree() (*cobra.Command, *cobra.Command) {
	root := &cobra.Command{Use: "opm"}
	root.PersistentFlags().String(FlagName, "", "")
	noun := &cobra.Command{Use: "noun"}
	verb := &cobra.Command{Use: "verb", Run: func(*cobra.Command, []string) {}}
	verb.Flags().String("fail-on", "error", "")
	verb.Flags().Bool("list-rules", false, "")
	_ = verb.Flags().SetAnnotation("list-rules", NoEnvAnnotation, []string{"true"})
	noun.AddCommand(verb)
	root.AddCommand(noun)
	_ = verb.InheritedFlags() // merges --config into verb.Flags(), as parsing does
	return root, verb
}

func env(m map[string]string) LookupEnv {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestEnvName(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "OPM_FAIL_ON", EnvName("fail-on"))
	assert.Equal(t, "OPM_A_B", EnvName("a.b"))
}

func TestDefaultFile(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "/x/opm/config.yaml", New(env(map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"})).DefaultFile())
	assert.Equal(t, "/h/.config/opm/config.yaml", New(env(map[string]string{"XDG_CONFIG_HOME": "rel", "HOME": "/h"})).DefaultFile(), "a relative XDG_CONFIG_HOME is ignored")
	assert.Empty(t, New(env(nil)).DefaultFile())
}

func TestApplyAndCheckUnknown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("fail-on: info\nnoun:\n  verb:\n    fail-on: warning\n"), 0o644))
	root, verb := tree()
	c := New(env(map[string]string{"OPM_CONFIG": cfg}))
	require.NoError(t, c.Load(verb))
	assert.Equal(t, cfg, c.File)
	require.NoError(t, c.CheckUnknown(root, []string{"OPM_CONFIG=" + cfg, "OPM_FAIL_ON=", "PATH=/bin"}))
	require.NoError(t, c.Apply(verb))
	assert.Equal(t, "warning", verb.Flags().Lookup("fail-on").Value.String(), "the key under the command wins")
	assert.Equal(t, " (from noun.verb.fail-on in "+cfg+")", c.From("fail-on"))
	assert.Empty(t, c.From("list-rules"))

	err := c.CheckUnknown(root, []string{"OPM_FAIL_NO=x", "OPM_LIST_RULES=1"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "OPM_FAIL_NO sets no flag of any opm command (did you mean OPM_FAIL_ON?)")
	assert.Contains(t, err.Error(), "OPM_LIST_RULES: --list-rules is an action")

	require.NoError(t, os.WriteFile(cfg, []byte("noun:\n  verb:\n    fial-on: warning\n  vreb: {fail-on: x}\n"), 0o644))
	c = New(env(nil))
	root, verb = tree()
	require.NoError(t, verb.Flags().Set(FlagName, cfg))
	require.NoError(t, c.Load(verb))
	err = c.CheckUnknown(root, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `noun.verb.fial-on in `+cfg+` sets no flag of opm noun verb; remove it or fix its name (did you mean "fail-on"?)`)
	assert.Contains(t, err.Error(), `noun.vreb in `+cfg+` sets no flag of opm noun; remove it or fix its name (did you mean "verb"?)`)
}
