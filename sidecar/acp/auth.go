package acp

import (
	"context"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"talaria/sidecar/protocol"
)

// Signing in and out of the agent (ACP authenticate and logout), for the window's
// sign-in card and Settings' "Sign out".

// Authenticate runs agent.authenticate: ACP authenticate with p.MethodID, which must
// be one of the auth methods the agent offered in initialize (starting the agent when
// needed). The agent decides what signing in means: OpenCode answers at once (its
// method says to run `opencode auth login` in a terminal), Hermes checks that its
// provider has credentials. Errors (*protocol.Error): invalid_params for a method the
// agent did not offer (the agent is not asked); credential_missing when the agent
// refuses (its words, and what it offers); agent_unavailable when it died.
func (r *Runtime) Authenticate(ctx context.Context, p protocol.AuthenticateParams) (struct{}, error) {
	a, err := r.ensureAgent(ctx)
	if err != nil {
		return struct{}{}, err
	}
	name := a.name(r.opts.Agent)
	var offered []string
	for _, m := range a.init.AuthMethods {
		if id := authMethod(m).ID; id != "" {
			offered = append(offered, id)
		}
	}
	if !slices.Contains(offered, p.MethodID) {
		msg := fmt.Sprintf("%s offers no sign-in method %q", name, p.MethodID)
		if len(offered) == 0 {
			msg = fmt.Sprintf("%s offers no way to sign in through Talaria; sign in with its own command in a terminal", name)
		} else {
			msg += " (it offers: " + strings.Join(offered, ", ") + ")"
		}
		return struct{}{}, protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams, msg)
	}
	if _, err := a.conn.Authenticate(ctx, sdk.AuthenticateRequest{MethodId: p.MethodID}); err != nil {
		if ctx.Err() != nil {
			return struct{}{}, ctx.Err()
		}
		if !a.alive() {
			return struct{}{}, r.deadError(a, "while signing in")
		}
		e := r.requestError(a, "refused to sign in", err)
		if e.Data.Condition != protocol.CondCredentialMissing {
			e = agentError(protocol.CondCredentialMissing, fmt.Sprintf("%s did not sign in: %s", name, requestMessage(err)), authHint(a))
		}
		return struct{}{}, e
	}
	r.log.Info("signed in to the agent", "method", p.MethodID)
	return struct{}{}, nil
}

// Logout runs agent.logout: ACP logout, only when the agent advertises it
// (agentCapabilities.auth.logout; unstable in ACP). Its open sessions stay as the agent
// keeps them; new ones will ask to sign in again. Errors (*protocol.Error):
// method_not_found when the agent does not offer it (it is not asked); agent_error with
// the agent's words; agent_unavailable when it died.
func (r *Runtime) Logout(ctx context.Context) (struct{}, error) {
	a, err := r.ensureAgent(ctx)
	if err != nil {
		return struct{}{}, err
	}
	name := a.name(r.opts.Agent)
	if a.init.AgentCapabilities.Auth.Logout == nil {
		return struct{}{}, protocol.NewError(protocol.CodeMethodNotFound, protocol.CondMethodNotFound,
			fmt.Sprintf("%s offers no sign-out through ACP: sign out with its own command in a terminal", name))
	}
	if _, err := a.conn.UnstableLogout(ctx, sdk.UnstableLogoutRequest{}); err != nil {
		if ctx.Err() != nil {
			return struct{}{}, ctx.Err()
		}
		if !a.alive() {
			return struct{}{}, r.deadError(a, "while signing out")
		}
		return struct{}{}, r.requestError(a, "refused to sign out", err)
	}
	r.log.Info("signed out of the agent")
	return struct{}{}, nil
}

// authHint lists the agent's sign-in methods for an error's hint.
func authHint(a *agentConn) string {
	var ways []string
	for _, m := range a.init.AuthMethods {
		am := authMethod(m)
		if am.Description != "" {
			ways = append(ways, am.Description)
		} else if am.Name != "" {
			ways = append(ways, am.Name)
		}
	}
	if len(ways) == 0 {
		return "Sign in with the agent's own command in a terminal, then try again."
	}
	return "It offers: " + strings.Join(ways, "; ") + "."
}
