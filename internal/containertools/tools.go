// Package containertools runs the container tools a user may ask for
// (docker, podman, buildah) when opm should not build images in-process.
package containertools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Tool names a container tool.
type Tool string

// The supported tools.
const (
	Docker  Tool = "docker"
	Podman  Tool = "podman"
	Buildah Tool = "buildah"
)

// Tools lists the supported tools in the order opm prefers them.
var Tools = []Tool{Podman, Buildah, Docker}

// ErrNotFound is wrapped when a tool's binary is not in PATH.
var ErrNotFound = errors.New("not found in PATH")

// ParseTool accepts "docker", "podman" or "buildah".
func ParseTool(s string) (Tool, error) {
	for _, t := range Tools {
		if string(t) == s {
			return t, nil
		}
	}
	return "", fmt.Errorf("unknown image builder %q: want docker, podman or buildah", s)
}

// Runner runs one tool.
type Runner struct {
	Tool Tool
	// Path is the resolved binary.
	Path string
	// Stdout and Stderr receive the tool's output as it runs (os.Stderr when nil:
	// opm keeps stdout for its own results).
	Stdout, Stderr io.Writer
	// Env is added to the environment of the tool.
	Env []string
	// BuildFlags are added to every build (such as --signature-policy).
	BuildFlags []string
}

// Find resolves the tool's binary in PATH. A missing tool says how to fix it.
func Find(t Tool) (*Runner, error) {
	p, err := exec.LookPath(string(t))
	if err != nil {
		return nil, fmt.Errorf("%s %w: install it or drop --image-builder", t, ErrNotFound)
	}
	return &Runner{Tool: t, Path: p}, nil
}

// Run runs the tool with args, streaming its output. Cancelling ctx stops it.
// A failure names the command and its exit status.
func (r *Runner) Run(ctx context.Context, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, r.Path, args...)
	cmd.Dir = dir
	cmd.Stdout = orStderr(r.Stdout)
	cmd.Stderr = orStderr(r.Stderr)
	cmd.Env = append(os.Environ(), r.Env...)
	// The tool runs in its own process group so that cancelling stops the
	// helpers it starts too (buildah and podman fork), not only the tool.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s %s: %w", r.Tool, strings.Join(args, " "), ctx.Err())
		}
		return fmt.Errorf("%s %s: %w", r.Tool, strings.Join(args, " "), err)
	}
	return nil
}

func orStderr(w io.Writer) io.Writer {
	if w == nil {
		return os.Stderr
	}
	return w
}

// BuildArgs returns the arguments that build dockerfile in contextDir as tag.
// buildah's subcommand is "bud"; docker and podman use "build".
func (r *Runner) BuildArgs(dockerfile, tag, contextDir string) []string {
	args := r.buildArgs(dockerfile, tag, contextDir)
	return append(append([]string{args[0]}, r.BuildFlags...), args[1:]...)
}

func (r *Runner) buildArgs(dockerfile, tag, contextDir string) []string {
	switch r.Tool {
	case Buildah:
		return []string{"bud", "--file", dockerfile, "--tag", tag, contextDir}
	case Podman:
		// Bundle and index Dockerfiles are a FROM, COPYs and LABELs: a
		// layer cache saves nothing, and its lookups race with other
		// builds in the same storage ("layer not known").
		return []string{"build", "--layers=false", "--file", dockerfile, "--tag", tag, contextDir}
	}
	return []string{"build", "--file", dockerfile, "--tag", tag, contextDir}
}

// Build builds dockerfile in contextDir as tag.
func (r *Runner) Build(ctx context.Context, dockerfile, tag, contextDir string) error {
	return r.Run(ctx, contextDir, r.BuildArgs(dockerfile, tag, contextDir)...)
}

// PushArgs returns the arguments that push tag.
func (r *Runner) PushArgs(tag string) []string { return []string{"push", tag} }

// Push pushes tag.
func (r *Runner) Push(ctx context.Context, tag string) error {
	return r.Run(ctx, "", r.PushArgs(tag)...)
}
