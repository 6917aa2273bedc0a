package root_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/config"
	"github.com/opmkit/opm/internal/cmd/exit"
)

const (
	validBundle  = "../../../testdata/bundles/valid"
	syntaxBundle = "../../../testdata/bundles/syntax-error"
	csvDir       = "../../../testdata/csv"
)

func TestRootHelpAndUnknownCommand(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	r := o.Run()
	assert.Equal(t, exit.OK, r.Code)
	assert.Contains(t, r.Out, "bundle")

	r = o.Run("frobnicate")
	assert.Equal(t, exit.Usage, r.Code)
	assert.Contains(t, r.ErrOut, "unknown command")
	assert.NotContains(t, r.ErrOut, "Did you mean")
}

// A mistyped subcommand gets cobra's suggestions, at every level.
func TestUnknownCommandSuggestions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args      []string
		bad, want string
	}{
		{[]string{"bundel"}, "bundel", "Did you mean this?\n\tbundle\n"},
		{[]string{"versoin"}, "versoin", "\tversion\n"},
		{[]string{"bundle", "valdate", "x"}, "valdate", "\tvalidate\n"},
		{[]string{"index", "ad"}, "ad", "\tadd\n"},
		{[]string{"csv", "lnt"}, "lnt", "\tlint\n"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			r := cmdtest.Run(t, tc.args...)
			want := exit.Usage
			if tc.args[0] == "index" {
				want = exit.UpstreamUsage // upstream's paths (docs/output.md)
			}
			assert.Equal(t, want, r.Code)
			assert.Contains(t, r.ErrOut, fmt.Sprintf("unknown command %q", tc.bad))
			assert.Contains(t, r.ErrOut, tc.want)
			assert.Empty(t, r.Out)
		})
	}
}

// A config key or OPM_* variable that sets no flag is a usage error naming
// it, so that a typo does not quietly disable a setting (a CI gate).
func TestUnknownConfigKeysAndEnv(t *testing.T) {
	t.Parallel()
	write := func(t *testing.T, o *cmdtest.Runner, content string) string {
		t.Helper()
		cfg := o.ConfigFile()
		require.NoError(t, os.MkdirAll(filepath.Dir(cfg), 0o755))
		require.NoError(t, os.WriteFile(cfg, []byte(content), 0o644))
		return cfg
	}
	for _, tc := range []struct {
		name, config string
		env          map[string]string
		want         []string
	}{
		{name: "top-level typo", config: "fial-on: warning\n",
			want: []string{`fial-on in `, `sets no flag of any opm command`, `did you mean "fail-on"?`}},
		{name: "typo under the command", config: "bundle:\n  validate:\n    fial-on: warning\n",
			want: []string{"bundle.validate.fial-on in ", "sets no flag of opm bundle validate", `did you mean "fail-on"?`}},
		{name: "flag of another command under a command", config: "csv:\n  lint:\n    from-files: true\n",
			want: []string{"csv.lint.from-files in ", "sets no flag of opm csv lint"}},
		{name: "unknown command", config: "bundel:\n  validate:\n    fail-on: warning\n",
			want: []string{"bundel in ", `did you mean "bundle"?`}},
		{name: "action in the config file", config: "list-rules: true\n",
			want: []string{"--list-rules is an action"}},
		{name: "command given a value", config: "bundle: warning\n",
			want: []string{`"bundle" is a command`}},
		{name: "env typo", env: map[string]string{"OPM_FIAL_ON": "warning"},
			want: []string{"OPM_FIAL_ON sets no flag of any opm command (did you mean OPM_FAIL_ON?)"}},
		{name: "env far from any flag", env: map[string]string{"OPM_NOTHING_LIKE_IT": "1"},
			want: []string{"OPM_NOTHING_LIKE_IT sets no flag", "--fail-on is OPM_FAIL_ON"}},
		{name: "env action", env: map[string]string{"OPM_LIST_RULES": "true"},
			want: []string{"OPM_LIST_RULES: --list-rules is an action"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := cmdtest.New(t)
			if tc.config != "" {
				cfg := write(t, o, tc.config)
				tc.want = append(tc.want, cfg)
			}
			for k, v := range tc.env {
				o.Env[k] = v
			}
			r := o.Run("bundle", "validate", validBundle)
			assert.Equal(t, exit.Usage, r.Code, r.ErrOut)
			for _, w := range tc.want {
				assert.Contains(t, r.ErrOut, w)
			}
			assert.Empty(t, r.Out)
		})
	}

	// Known keys and variables pass, including a flag of another command
	// at the top level (it applies wherever it exists), an empty OPM_*
	// variable (unset), OPM_CONFIG, and variables of other commands' flags.
	o := cmdtest.New(t)
	write(t, o, "mode: semver\noutput: text\nbundle:\n  validate:\n    fail-on: error\nindex:\n  add:\n    mode: replaces\n")
	o.Env["OPM_MODE"] = "semver"
	o.Env["OPM_FIAL_ON"] = ""
	r := o.Run("bundle", "validate", validBundle)
	assert.Equal(t, exit.OK, r.Code, r.ErrOut)
}

func TestColor(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	// On a terminal, severities are coloured.
	r := o.RunTTY("bundle", "validate", syntaxBundle)
	require.Equal(t, exit.Failed, r.Code)
	assert.Contains(t, r.ErrOut, "\x1b[", "colour on a terminal")

	// Not on a terminal: plain text.
	r = o.Run("bundle", "validate", syntaxBundle)
	assert.NotContains(t, r.ErrOut, "\x1b")

	// NO_COLOR wins over the terminal.
	o.Env["NO_COLOR"] = "1"
	r = o.RunTTY("bundle", "validate", syntaxBundle)
	assert.NotContains(t, r.ErrOut, "\x1b")
	r = o.RunTTY("bundle", "validate", "--select", "nope", syntaxBundle)
	assert.Equal(t, exit.Usage, r.Code)
	assert.NotContains(t, r.ErrOut, "\x1b")
	assert.Contains(t, r.ErrOut, "error: ")

	// JSON never carries escapes.
	o.Env["NO_COLOR"] = ""
	r = o.RunTTY("bundle", "validate", "-o", "json", syntaxBundle)
	assert.NotContains(t, r.Out, "\x1b")
}

func TestEnvAndConfigPrecedence(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	cfgDir := filepath.Dir(o.ConfigFile())
	require.NoError(t, os.MkdirAll(cfgDir, 0o755))
	cfg := filepath.Join(cfgDir, "config.yaml")

	// The default config file is read.
	require.NoError(t, os.WriteFile(cfg, []byte("fail-on: nonsense\n"), 0o644))
	r := o.Run("bundle", "validate", validBundle)
	assert.Equal(t, exit.Usage, r.Code)
	assert.Contains(t, r.ErrOut, `invalid --fail-on "nonsense" (from fail-on in `+cfg+`)`)

	// The environment wins over the config file.
	o.Env["OPM_FAIL_ON"] = "alsononsense"
	r = o.Run("bundle", "validate", validBundle)
	assert.Equal(t, exit.Usage, r.Code)
	assert.Contains(t, r.ErrOut, `invalid --fail-on "alsononsense" (from OPM_FAIL_ON)`)

	// The flag wins over both.
	r = o.Run("bundle", "validate", "--fail-on", "warning", validBundle)
	assert.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "(failing on warnings and above)")

	// A valid value from the environment applies.
	o.Env["OPM_FAIL_ON"] = "warning"
	r = o.Run("bundle", "validate", validBundle)
	assert.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "(failing on warnings and above)")
	o.Env["OPM_FAIL_ON"] = ""

	// Lists, and keys under the command, which win over top-level ones.
	require.NoError(t, os.WriteFile(cfg, []byte("select: [bundle-no-csv]\nbundle:\n  validate:\n    select: [yaml-syntax]\n    output: json\n"), 0o644))
	r = o.Run("bundle", "validate", syntaxBundle)
	require.Equal(t, exit.Failed, r.Code, r.ErrOut)
	doc := cmdtest.DecodeReport(t, r.Out)
	fs := cmdtest.Findings(doc, 0)
	require.NotEmpty(t, fs)
	for _, f := range fs {
		assert.Equal(t, "yaml-syntax", f["rule"])
	}
	// OPM_SELECT replaces the configured list.
	o.Env["OPM_SELECT"] = "bundle-no-csv"
	r = o.Run("bundle", "validate", syntaxBundle)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Empty(t, cmdtest.Findings(cmdtest.DecodeReport(t, r.Out), 0))
	o.Env["OPM_SELECT"] = ""

	// An explicit --config must exist; OPM_CONFIG too.
	r = o.Run("--config", filepath.Join(cfgDir, "missing.yaml"), "bundle", "validate", validBundle)
	assert.Equal(t, exit.Usage, r.Code)
	assert.Contains(t, r.ErrOut, "missing.yaml (from --config): no such file")
	o.Env["OPM_CONFIG"] = filepath.Join(cfgDir, "missing.yaml")
	r = o.Run("bundle", "validate", validBundle)
	assert.Equal(t, exit.Usage, r.Code)
	assert.Contains(t, r.ErrOut, "(from OPM_CONFIG)")
	o.Env["OPM_CONFIG"] = ""

	// --config names another file, which replaces the default one.
	other := filepath.Join(t.TempDir(), "opm.yaml")
	require.NoError(t, os.WriteFile(other, []byte("output: json\n"), 0o644))
	r = o.Run("bundle", "validate", "--config", other, validBundle)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.JSONEq(t, `{"passed": true, "bundles": [{"path": "`+validBundle+`", "name": "example-operator.v0.1.0", "findings": []}]}`, r.Out)

	// A config file that does not parse is a usage error.
	require.NoError(t, os.WriteFile(other, []byte("output: [json\n"), 0o644))
	r = o.Run("bundle", "validate", "--config", other, validBundle)
	assert.Equal(t, exit.Usage, r.Code)
	assert.Contains(t, r.ErrOut, other)
}

func TestMissingDefaultConfigIsFine(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	home := t.TempDir()
	o.Env["XDG_CONFIG_HOME"] = ""
	o.Env["HOME"] = home
	r := o.Run("version")
	assert.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Equal(t, filepath.Join(home, ".config", "opm", "config.yaml"), config.New(func(k string) (string, bool) {
		v, ok := o.Env[k]
		return v, ok
	}).DefaultFile())
}
