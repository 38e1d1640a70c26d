package infra_test

import (
	"strings"
	"testing"

	"github.com/agentbox/agentbox/infra"
)

// TestTemplateOAuth checks the OAuth option as deployed: the Cognito
// resources exist only with OAuthIssuer cognito; the app client is public
// and runs the code flow for the resource server's two scopes; every
// function gets the OAuth environment; the outputs a connector needs are
// there. (cfn-lint and the SAM transform check the rest: TestCfnLint,
// TestSAMTransform.)
func TestTemplateOAuth(t *testing.T) {
	root := loadTemplate(t)
	res := get(root, "Resources")
	for id, typ := range map[string]string{
		infra.OAuthUserPool:       "AWS::Cognito::UserPool",
		infra.OAuthUserPoolDomain: "AWS::Cognito::UserPoolDomain",
		infra.OAuthResourceServer: "AWS::Cognito::UserPoolResourceServer",
		infra.OAuthAppClient:      "AWS::Cognito::UserPoolClient",
	} {
		r := get(res, id)
		if str(get(r, "Type")) != typ || str(get(r, "Condition")) != "OAuthCognito" {
			t.Errorf("%s: Type %s, Condition %s; want %s under OAuthCognito", id, str(get(r, "Type")), str(get(r, "Condition")), typ)
		}
	}
	client := path(res, infra.OAuthAppClient, "Properties")
	if str(get(client, "GenerateSecret")) != "false" || str(get(client, "AllowedOAuthFlowsUserPoolClient")) != "true" {
		t.Errorf("app client: GenerateSecret %s, AllowedOAuthFlowsUserPoolClient %s; want a public OAuth client",
			str(get(client, "GenerateSecret")), str(get(client, "AllowedOAuthFlowsUserPoolClient")))
	}
	if flows := get(client, "AllowedOAuthFlows"); flows == nil || len(flows.Content) != 1 || flows.Content[0].Value != "code" {
		t.Errorf("app client: AllowedOAuthFlows = %v, want [code]", flows)
	}
	var scopes []string
	for _, s := range path(res, infra.OAuthResourceServer, "Properties", "Scopes").Content {
		scopes = append(scopes, str(get(s, "ScopeName")))
	}
	if strings.Join(scopes, " ") != "coordination:read coordination:write" {
		t.Errorf("resource server scopes = %v, want coordination:read and coordination:write", scopes)
	}
	env := path(root, "Globals", "Function", "Environment", "Variables")
	for _, v := range []string{"AGENTBOX_OAUTH_ISSUER", "AGENTBOX_OAUTH_AUDIENCE", "AGENTBOX_OAUTH_SCOPE_PREFIX", "AGENTBOX_OAUTH_AUDIENCE_FROM_SCOPES"} {
		if get(env, v) == nil {
			t.Errorf("Globals: no %s: the functions would not take tokens", v)
		}
	}
	out := get(root, "Outputs")
	for _, o := range []string{"OAuthTokenIssuer", "OAuthClientId", "OAuthAuthorizationUrl", "OAuthScopes"} {
		if get(out, o) == nil {
			t.Errorf("Outputs: no %s", o)
		}
	}
	if str(path(root, "Parameters", "OAuthIssuer", "Default")) != "none" {
		t.Errorf("OAuthIssuer defaults to %s, want none: a stack takes keys only until its owner opts in", str(path(root, "Parameters", "OAuthIssuer", "Default")))
	}
}
