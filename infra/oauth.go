package infra

// OAuth on the stack (issue 27, internal/oauth): the functions accept
// access tokens beside agent keys when OAuthIssuer is not "none".
//
//   - cognito: the stack creates an Amazon Cognito user pool for the
//     tenant, with a hosted domain, a resource server whose identifier is
//     OAuthResourceServerId (default agentbox-<tenant>) and whose scopes are
//     coordination:read and coordination:write, and a public app client
//     for the authorization-code flow with PKCE, calling back to
//     OAuthCallbackUrls (the hosted connector's redirect). Cognito's access
//     tokens carry no aud: they are bound to this resource by their scopes
//     ("<identifier>/coordination:write"), which the functions check
//     (AGENTBOX_OAUTH_AUDIENCE_FROM_SCOPES), and the metadata names the
//     MCP endpoint each request came to.
//   - existing: OAuthIssuerUrl names the tenant's own issuer and
//     OAuthAudience the aud its tokens carry for this stack (its MCP URL,
//     when the issuer honours RFC 8707 resource indicators);
//     OAuthScopePrefix is what its scope names start with, if anything.
//
// The MCP function serves the protected resource metadata (RFC 9728) at
// OAuthMetadataRoutes whatever the mode; with OAuth off they answer the
// not-found envelope. Everything of OAuth is here; template.go calls it at
// one place per section.

import "strings"

// Logical ids of the Cognito resources (condition OAuthCognito).
const (
	OAuthUserPool       = "OAuthUserPool"
	OAuthUserPoolDomain = "OAuthUserPoolDomain"
	OAuthResourceServer = "OAuthResourceServer"
	OAuthAppClient      = "OAuthAppClient"
)

// OAuthMetadataRoutes are the MCP function's metadata routes: the
// well-known address and its path form for /mcp.
var OAuthMetadataRoutes = []string{"GET /.well-known/oauth-protected-resource", "GET /.well-known/oauth-protected-resource/mcp"}

// Environment of every function (functions/lambdafn).
const (
	oauthIssuerEnv      = "AGENTBOX_OAUTH_ISSUER"
	oauthAudienceEnv    = "AGENTBOX_OAUTH_AUDIENCE"
	oauthPrefixEnv      = "AGENTBOX_OAUTH_SCOPE_PREFIX"
	oauthFromScopesEnv  = "AGENTBOX_OAUTH_AUDIENCE_FROM_SCOPES"
	cognitoIssuer       = `!Sub "https://cognito-idp.${AWS::Region}.${AWS::URLSuffix}/${OAuthUserPool}"`
	resourceServerIDSub = `!If [HasOAuthResourceServerId, !Ref OAuthResourceServerId, !Sub "agentbox-${TenantName}"]`
)

// oauthParams are the OAuth parameters, in template order.
var oauthParams = []struct {
	name, typ, desc, def, allowed, pattern string
}{
	{"OAuthIssuer", "String", "OAuth access tokens beside agent keys (hosted MCP connectors). none; cognito (the stack creates a user pool, its domain, the resource server with the coordination scopes and an app client for authorization code + PKCE); or existing (OAuthIssuerUrl and OAuthAudience name your own issuer).", "none", "[none, cognito, existing]", ""},
	{"OAuthIssuerUrl", "String", "With OAuthIssuer existing, the issuer exactly as its tokens' iss (it must serve /.well-known/openid-configuration).", "", "", "^(https://[^\\s]+)?$"},
	{"OAuthAudience", "String", "With OAuthIssuer existing, the aud its tokens carry for this stack (usually the McpUrl output). Unused with cognito, whose access tokens carry none.", "", "", ""},
	{"OAuthScopePrefix", "String", "With OAuthIssuer existing, what the coordination scope names start with in its tokens (empty for plain coordination:read).", "", "", ""},
	{"OAuthResourceServerId", "String", "With OAuthIssuer cognito, the resource server's identifier, the prefix of its scopes (default agentbox-<tenant>).", "", "", ""},
	{"OAuthDomainPrefix", "String", "With OAuthIssuer cognito, the user pool's hosted domain prefix (https://<prefix>.auth.<region>.amazoncognito.com); globally unique. Default agentbox-<tenant>-<account id>.", "", "", "^([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)?$"},
	{"OAuthCallbackUrls", "CommaDelimitedList", "With OAuthIssuer cognito, the redirect URLs of the hosted connector(s) that sign in (their documentation names them).", "https://claude.ai/api/mcp/auth_callback", "", ""},
}

func oauthParameters(w func(string, ...any)) {
	for _, p := range oauthParams {
		w("  %s:", p.name)
		w("    Type: %s", p.typ)
		w("    Description: %s", q(p.desc))
		w("    Default: %s", q(p.def))
		if p.allowed != "" {
			w("    AllowedValues: %s", p.allowed)
		}
		if p.pattern != "" {
			w("    AllowedPattern: %s", q(p.pattern))
		}
	}
}

func oauthConditions(w func(string, ...any)) {
	w("  OAuthCognito: !Equals [!Ref OAuthIssuer, cognito]")
	w("  OAuthExisting: !Equals [!Ref OAuthIssuer, existing]")
	w("  HasOAuthResourceServerId: !Not [!Equals [!Ref OAuthResourceServerId, \"\"]]")
	w("  HasOAuthDomainPrefix: !Not [!Equals [!Ref OAuthDomainPrefix, \"\"]]")
}

// oauthRules refuses an existing issuer without its URL or audience at
// deploy time, rather than as functions that cannot start.
func oauthRules(w func(string, ...any)) {
	w("Rules:")
	w("  ExistingIssuerNamed:")
	w("    RuleCondition: !Equals [!Ref OAuthIssuer, existing]")
	w("    Assertions:")
	w("      - Assert: !Not [!Equals [!Ref OAuthIssuerUrl, \"\"]]")
	w("        AssertDescription: OAuthIssuer existing needs OAuthIssuerUrl.")
	w("      - Assert: !Not [!Equals [!Ref OAuthAudience, \"\"]]")
	w("        AssertDescription: OAuthIssuer existing needs OAuthAudience.")
	w("")
}

// oauthEnv writes the functions' OAuth variables (Globals): empty when
// OAuth is off, which the functions read as keys only.
func oauthEnv(w func(string, ...any)) {
	w("        %s: !If [OAuthCognito, %s, !If [OAuthExisting, !Ref OAuthIssuerUrl, \"\"]]", oauthIssuerEnv, cognitoIssuer)
	w("        %s: !If [OAuthExisting, !Ref OAuthAudience, \"\"]", oauthAudienceEnv)
	w("        %s: !If [OAuthCognito, !Join [\"\", [%s, \"/\"]], !If [OAuthExisting, !Ref OAuthScopePrefix, \"\"]]", oauthPrefixEnv, resourceServerIDSub)
	w("        %s: !If [OAuthCognito, \"true\", \"false\"]", oauthFromScopesEnv)
}

// oauthResources writes the Cognito user pool and its parts.
func oauthResources(w func(string, ...any)) {
	w("  %s:", OAuthUserPool)
	w("    Type: AWS::Cognito::UserPool")
	w("    Condition: OAuthCognito")
	w("    # The people who sign in to hosted connectors; the owner invites them")
	w("    # (no self sign-up) and links each one's sub to an agent.")
	w("    DeletionPolicy: Retain")
	w("    UpdateReplacePolicy: Retain")
	w("    Properties:")
	w("      UserPoolName: !Sub \"agentbox-${TenantName}\"")
	w("      AdminCreateUserConfig:")
	w("        AllowAdminCreateUserOnly: true")
	w("      UsernameAttributes: [email]")
	w("      AutoVerifiedAttributes: [email]")
	w("      DeletionProtection: ACTIVE")
	w("      UserPoolTags:")
	w("        agentbox:tenant: !Ref TenantName")
	w("  %s:", OAuthUserPoolDomain)
	w("    Type: AWS::Cognito::UserPoolDomain")
	w("    Condition: OAuthCognito")
	w("    Properties:")
	w("      UserPoolId: !Ref %s", OAuthUserPool)
	w("      Domain: !If [HasOAuthDomainPrefix, !Ref OAuthDomainPrefix, !Sub \"agentbox-${TenantName}-${AWS::AccountId}\"]")
	w("  %s:", OAuthResourceServer)
	w("    Type: AWS::Cognito::UserPoolResourceServer")
	w("    Condition: OAuthCognito")
	w("    Properties:")
	w("      UserPoolId: !Ref %s", OAuthUserPool)
	w("      Identifier: %s", resourceServerIDSub)
	w("      Name: !Sub \"agentbox ${TenantName}\"")
	w("      Scopes:")
	w("        - ScopeName: coordination:read")
	w("          ScopeDescription: Read the box's coordination state as your agent.")
	w("        - ScopeName: coordination:write")
	w("          ScopeDescription: Send, answer and change coordination state as your agent.")
	w("  %s:", OAuthAppClient)
	w("    Type: AWS::Cognito::UserPoolClient")
	w("    Condition: OAuthCognito")
	w("    DependsOn: %s", OAuthResourceServer)
	w("    Properties:")
	w("      UserPoolId: !Ref %s", OAuthUserPool)
	w("      ClientName: !Sub \"agentbox-${TenantName}-connector\"")
	w("      # A public client: hosted connectors run the code flow with PKCE")
	w("      # and keep no secret.")
	w("      GenerateSecret: false")
	w("      AllowedOAuthFlowsUserPoolClient: true")
	w("      AllowedOAuthFlows: [code]")
	w("      AllowedOAuthScopes:")
	w("        - openid")
	w("        - %s", oauthScope("coordination:read"))
	w("        - %s", oauthScope("coordination:write"))
	w("      CallbackURLs: !Ref OAuthCallbackUrls")
	w("      SupportedIdentityProviders: [COGNITO]")
	w("      ExplicitAuthFlows: [ALLOW_REFRESH_TOKEN_AUTH]")
	w("      PreventUserExistenceErrors: ENABLED")
	w("      EnableTokenRevocation: true")
	w("      AccessTokenValidity: 60")
	w("      RefreshTokenValidity: 30")
	w("      TokenValidityUnits:")
	w("        AccessToken: minutes")
	w("        RefreshToken: days")
	w("")
}

// oauthOutputs are what a connector needs.
func oauthOutputs(w func(string, ...any)) {
	w("  OAuthTokenIssuer:")
	w("    Description: %s", q("The issuer whose access tokens the stack accepts (empty with OAuth off)."))
	w("    Value: !If [OAuthCognito, %s, !If [OAuthExisting, !Ref OAuthIssuerUrl, \"\"]]", cognitoIssuer)
	w("  OAuthClientId:")
	w("    Condition: OAuthCognito")
	w("    Description: %s", q("The Cognito app client id a hosted connector asks for (public: no secret)."))
	w("    Value: !Ref %s", OAuthAppClient)
	w("  OAuthAuthorizationUrl:")
	w("    Condition: OAuthCognito")
	w("    Description: %s", q("The user pool's hosted sign-in (authorization endpoint)."))
	w("    Value: !Sub \"https://${%s}.auth.${AWS::Region}.amazoncognito.com/oauth2/authorize\"", OAuthUserPoolDomain)
	w("  OAuthScopes:")
	w("    Condition: OAuthCognito")
	w("    Description: %s", q("The scopes a connector requests."))
	w("    Value: !Join [\" \", [%s, %s]]", oauthScope("coordination:read"), oauthScope("coordination:write"))
}

// oauthScope is a Cognito scope of the resource server: "<identifier>/name".
func oauthScope(name string) string {
	return "!Join [\"/\", [" + resourceServerIDSub + ", " + name + "]]"
}

// oauthMetadataRoutes are the MCP function's metadata routes.
func oauthMetadataRoutes() []route {
	var out []route
	for i, rt := range OAuthMetadataRoutes {
		method, path, _ := strings.Cut(rt, " ")
		out = append(out, route{event: []string{"OAuthMetadata", "OAuthMetadataMcp"}[i], method: method, path: path})
	}
	return out
}
