package root_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/root"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/iostreams"
	"github.com/opmkit/opm/internal/registrytest"
)

// pullers are the commands that read images, each with a command line that
// pulls one from the test registry: {bundle} and {index} are images pushed
// there, {dir} a fresh directory, {out} a reference nothing is pushed to,
// {template} a basic template, {filter} a FilterConfiguration and
// {registry} the registry's host:port.
var pullers = map[string][]string{
	"alpha bundle build":        {"-d", validBundle, "-t", "{out}", "-p", "example-operator", "-c", "stable", "--base-image", "{bundle}"},
	"alpha bundle unpack":       {"{bundle}", "-o", "{dir}"},
	"alpha bundle validate":     {"-t", "{bundle}"},
	"alpha list bundles":        {"{index}"},
	"alpha filter":              {"{index}", "--keep-packages", "example-operator"},
	"alpha list images":         {"{index}"},
	"alpha mirror":              {"{index}", "--to-dir", "{dir}/mirror"},
	"alpha mirror prune":        {"--to", "{registry}", "--keep", "{index}"},
	"alpha list channels":       {"{index}"},
	"alpha list packages":       {"{index}"},
	"alpha render-graph":        {"{index}"},
	"alpha render-template":     {"basic", "{template}"},
	"alpha template add-bundle": {"{template}", "--image", "{bundle}"},
	"bundle validate":           {"{bundle}"},
	"diff":                      {"{index}", "{index}"},
	"index add":                 {"--bundles", "{bundle}", "--database", "{dir}/index.db"},
	"index deprecatetruncate":   {"--bundles", "{bundle}", "--from-index", "{index}", "--tag", "{out}"},
	"index filter":              {"--config", "{filter}", "-f", "{index}", "-t", "{out}"},
	"index export":              {"--index", "{index}", "--download-folder", "{dir}"},
	"index inspect":             {"{index}"},
	"index prune":               {"--packages", "example-operator", "--from-index", "{index}", "--tag", "{out}"},
	"index prune-stranded":      {"--from-index", "{index}", "--tag", "{out}"},
	"index rm":                  {"--operators", "example-operator", "--from-index", "{index}", "--tag", "{out}"},
	"migrate":                   {"{index}", "{dir}/out"},
	"registry add":              {"-b", "{bundle}", "-d", "{dir}/index.db"},
	"render":                    {"{bundle}"},
	"validate":                  {"{index}"},
	"alpha upgrade-path":        {"{index}", "--package", "example-operator", "--from", "0.1.0"},
	"alpha resolve":             {"--catalog", "{index}", "--subscription", "example-operator"},
}

// pullsNothing are the commands that read no image, each with the reason.
var pullsNothing = map[string]string{
	"alpha bundle generate":              "writes a Dockerfile and annotations from a directory",
	"alpha convert-template basic":       "reads a file-based catalog from a file",
	"alpha convert-template substitutes": "reads a file-based catalog from a file",
	"bundle generate":                    "writes a Dockerfile and annotations from a directory",
	"csv lint":                           "reads CSV files",
	"generate dockerfile":                "writes a Dockerfile for a catalog directory",
	"init":                               "writes a package's olm.package blob",
	"registry deprecatetruncate":         "names bundles by image reference in a database file; pulls nothing",
	"registry health":                    "asks a gRPC registry server",
	"registry prune":                     "edits a database file",
	"registry prune-stranded":            "edits a database file",
	"registry rm":                        "edits a database file",
	"registry serve":                     "serves a database file",
	"serve":                              "serves a catalog directory",
	"version":                            "prints the build",
}

// pushesOnly are the commands that write images and read none: they have
// the image flags, for the push, and no pull to refuse.
var pushesOnly = map[string]string{
	"bundle build": "pushes the bundle image it builds from a directory (the base image is alpha bundle build's --base-image)",
}

// leafCommands are the paths (without "opm ") of every command of the real
// tree that runs something of its own: not the groups, which print help.
func leafCommands(t *testing.T) map[string]*cobra.Command {
	t.Helper()
	s, _, _, _ := iostreams.Test()
	out := map[string]*cobra.Command{}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		// A command with subcommands runs something of its own when it
		// has flags (alpha mirror); a group has none.
		if c.HasParent() && c.Name() != "help" && (!c.HasSubCommands() || c.LocalNonPersistentFlags().HasAvailableFlags()) {
			out[strings.TrimPrefix(c.CommandPath(), "opm ")] = c
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root.NewCmd(factory.NewWithEnv(s, nil)))
	return out
}

// TestEveryCommandIsClassifiedForPulls: a command is either in pullers,
// proven below to honour the signature policy, or in pullsNothing or
// pushesOnly with a reason; a new command fails here until it is put in one of them. A
// command that has the shared image flags pulls, so it cannot be
// exempted.
func TestEveryCommandIsClassifiedForPulls(t *testing.T) {
	t.Parallel()
	var missing []string
	for path, c := range leafCommands(t) {
		_, pulls := pullers[path]
		_, exempt := pullsNothing[path]
		_, pushes := pushesOnly[path]
		switch {
		case pushes && (pulls || exempt):
			t.Errorf("%s is in pushesOnly and another list", path)
		case pushes:
		case pulls && exempt:
			t.Errorf("%s is in both pullers and pullsNothing", path)
		case !pulls && !exempt:
			missing = append(missing, path)
		case exempt && c.LocalFlags().Lookup(image.FlagSignaturePolicy) != nil:
			t.Errorf("%s has the image flags, so it pulls: move it from pullsNothing to pullers", path)
		case pulls && c.LocalFlags().Lookup(image.FlagSignaturePolicy) == nil:
			t.Errorf("%s pulls images but has no --%s of its own (add image.Options.AddFlags): the root flag would be ignored", path, image.FlagSignaturePolicy)
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("%s is in neither pullers nor pullsNothing (internal/cmd/root/pullpolicy_test.go): if it reads images, add a command line that pulls one", m)
	}
	all := leafCommands(t)
	for path := range pullers {
		if all[path] == nil {
			t.Errorf("pullers names %s, which is not a command", path)
		}
	}
	for path := range pushesOnly {
		if all[path] == nil {
			t.Errorf("pushesOnly names %s, which is not a command", path)
		}
	}
	for path := range pullsNothing {
		if all[path] == nil {
			t.Errorf("pullsNothing names %s, which is not a command", path)
		}
	}
}

// TestEveryPullerRefusesUnderARejectingPolicy runs each command of pullers
// against a real registry with a policy that rejects everything: each
// fails, naming the policy, whether the policy is given as the command's
// flag or before it as a global one.
func TestEveryPullerRefusesUnderARejectingPolicy(t *testing.T) {
	t.Parallel()
	reg := registrytest.Start(t)
	o := cmdtest.New(t)
	bundleRef, indexRef := reg.Ref("bundle:1"), reg.Ref("index:1")
	r := o.Run("bundle", "build", "-d", validBundle, "-t", bundleRef, "--use-http")
	require.Equal(t, 0, r.Code, r.ErrOut)
	r = o.Run("index", "add", "--use-http", "--bundles", bundleRef, "--tag", indexRef, "--binary-image", bundleRef)
	require.Equal(t, 0, r.Code, r.ErrOut)

	dir := t.TempDir()
	policy := filepath.Join(dir, "reject.json")
	require.NoError(t, os.WriteFile(policy, []byte(`{"default":[{"type":"reject"}]}`), 0o644))
	template := filepath.Join(dir, "template.yaml")
	require.NoError(t, os.WriteFile(template, []byte(`schema: olm.template.basic
entries:
- schema: olm.package
  name: example-operator
- schema: olm.bundle
  image: `+bundleRef+"\n"), 0o644))
	filter := filepath.Join(dir, "filter.yaml")
	require.NoError(t, os.WriteFile(filter, []byte("apiVersion: olm.operatorframework.io/v1alpha1\nkind: FilterConfiguration\npackages:\n- name: example-operator\n"), 0o644))

	paths := make([]string, 0, len(pullers))
	for p := range pullers {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, path := range paths {
		for _, global := range []bool{false, true} {
			work := t.TempDir()
			var args []string
			if global {
				args = append(args, "--"+image.FlagSignaturePolicy, policy)
			}
			args = append(args, strings.Fields(path)...)
			for _, a := range pullers[path] {
				a = strings.NewReplacer("{bundle}", bundleRef, "{index}", indexRef, "{dir}", work, "{registry}", reg.Addr,
					"{out}", reg.Ref("out:1"), "{template}", template, "{filter}", filter).Replace(a)
				args = append(args, a)
			}
			args = append(args, "--use-http")
			if !global {
				args = append(args, "--"+image.FlagSignaturePolicy, policy)
			}
			r := o.Run(args...)
			if r.Code == 0 || !strings.Contains(r.ErrOut, "refused by the signature policy "+policy) {
				t.Errorf("opm %s: exit %d, want a refusal naming %s:\n%s", strings.Join(args, " "), r.Code, policy, r.ErrOut)
			}
		}
	}
}

// TestPullToolHeldToThePolicy: images pulled by a container tool (bundles
// with --pull-tool, the --binary-image with --build-tool, the --base-image
// of alpha bundle build -b) are held to the
// same policy: docker, which checks no signatures, is refused under a
// policy that requires them; podman is given the policy and refuses the
// pull itself.
func TestPullToolHeldToThePolicy(t *testing.T) {
	t.Parallel()
	reg := registrytest.Start(t)
	o := cmdtest.New(t)
	bundleRef := reg.Ref("bundle:1")
	r := o.Run("bundle", "build", "-d", validBundle, "-t", bundleRef, "--use-http")
	require.Equal(t, 0, r.Code, r.ErrOut)
	dir := t.TempDir()
	policy := filepath.Join(dir, "reject.json")
	require.NoError(t, os.WriteFile(policy, []byte(`{"default":[{"type":"reject"}]}`), 0o644))

	for _, args := range [][]string{
		{"index", "add", "--bundles", bundleRef, "--database", filepath.Join(dir, "a.db"), "--pull-tool", "docker"},
		{"registry", "add", "-b", bundleRef, "-d", filepath.Join(dir, "b.db"), "-c", "docker"},
	} {
		r := o.Run(append(args, "--use-http", "--signature-policy", policy)...)
		assert.NotEqual(t, 0, r.Code, r.ErrOut)
		assert.Contains(t, r.ErrOut, "--pull-tool docker: the signature policy "+policy+" requires signatures, which docker does not check", "%v", args)
	}

	// A build tool pulls the --binary-image (the bundle is a directory,
	// which is not pulled).
	build := []string{"index", "add", "--bundles", validBundle, "--tag", reg.Ref("out:1"), "--binary-image", bundleRef, "--use-http", "--signature-policy", policy}
	r = o.Run(append(build, "--build-tool", "docker")...)
	assert.NotEqual(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "--build-tool docker: the signature policy "+policy+" requires signatures, which docker does not check")

	r = o.Run("alpha", "bundle", "build", "-d", validBundle, "-t", reg.Ref("out:1"), "-p", "example-operator", "-c", "stable",
		"--base-image", bundleRef, "-b", "docker", "--use-http", "--signature-policy", policy)
	assert.NotEqual(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "--base-image: the signature policy "+policy+" requires signatures, which docker does not check")

	registrytest.RequireTool(t, "podman")
	r = o.Run("index", "add", "--bundles", bundleRef, "--database", filepath.Join(dir, "c.db"), "--pull-tool", "podman", "--use-http", "--signature-policy", policy)
	assert.NotEqual(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "rejected by policy", "podman refuses the pull under the policy it was given")
	_, err := os.Stat(filepath.Join(dir, "c.db"))
	assert.True(t, os.IsNotExist(err), "nothing was added")
	r = o.Run(append(build, "--build-tool", "podman")...)
	assert.NotEqual(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "rejected by policy", "podman build refuses the FROM image under the policy it was given")
}
