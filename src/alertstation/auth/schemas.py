"""Request and response schemas of the account and session routes (alertstation.http.openapi)."""

from alertstation.http.openapi import (
    BOOL,
    COUNT,
    ID,
    STRING,
    TIMESTAMP,
    RouteKey,
    RouteSchema,
    api,
    array,
    body,
    named,
    nullable,
    obj,
    page,
)

ROLE = {"type": "string", "examples": ["admin", "operator", "viewer", "demo"]}
USER = named(
    "User",
    obj(
        id=ID,
        username=STRING,
        role=ROLE,
        is_active=BOOL,
        created_at=nullable(TIMESTAMP),
        last_login_at=nullable(TIMESTAMP),
    ),
)
SESSION = named(
    "Session",
    obj(
        id=ID,
        user_id=ID,
        username=STRING,
        role=ROLE,
        source_ip=nullable(STRING),
        user_agent=nullable(STRING),
        created_at=TIMESTAMP,
        last_seen_at=nullable(TIMESTAMP),
        ended_at=nullable(TIMESTAMP),
        ended_reason=nullable(STRING),
        active=BOOL,
        current=BOOL,
    ),
)
CREDENTIALS = body(username=STRING, password=STRING, next=STRING)
API_TOKEN = named(
    "ApiToken",
    obj(
        id=ID,
        user_id=ID,
        username=STRING,
        name=STRING,
        prefix=STRING,
        scopes=array(STRING),
        created_at=TIMESTAMP,
        expires_at=nullable(TIMESTAMP),
        revoked_at=nullable(TIMESTAMP),
        last_used_at=nullable(TIMESTAMP),
        last_used_ip=nullable(STRING),
        state=STRING,
    ),
)

SCHEMAS: dict[RouteKey, RouteSchema] = {
    ("GET", "/api/tokens"): api(obj(tokens=array(API_TOKEN), grantable_scopes=array(STRING))),
    ("POST", "/api/tokens"): api(
        obj(token=STRING, api_token=API_TOKEN),
        status=201,
        request=body(
            name=STRING,
            scopes=array(STRING),
            expires_in_days=nullable({"type": "integer", "minimum": 1, "maximum": 3650}),
        ),
    ),
    ("DELETE", "/api/tokens/{token_id:int}"): api(obj(revoked=ID, api_token=API_TOKEN)),
    ("GET", "/account/tokens"): page(),
    ("GET", "/admin/tokens"): api(obj(tokens=array(API_TOKEN)), also=("text/html",)),
    ("DELETE", "/api/admin/tokens/{token_id:int}"): api(obj(revoked=ID, api_token=API_TOKEN)),
    ("GET", "/login"): RouteSchema(
        media=("text/html",), query={"next": STRING}, responses={303: None}
    ),
    ("GET", "/account"): page(),
    ("POST", "/account/password"): api(
        obj(changed=BOOL, other_sessions_ended=COUNT),
        request=body(current_password=STRING, new_password=STRING),
    ),
    ("GET", "/admin/sessions"): page(),
    ("GET", "/admin/users"): page(),
    ("POST", "/admin/users"): api(
        obj(user=USER), status=201, request=body(username=STRING, role=ROLE, password=STRING)
    ),
    ("DELETE", "/admin/users/{user_id:int}"): api(obj(deleted=ID)),
    ("PATCH", "/admin/users/{user_id:int}"): api(
        obj(user=USER, changed=array(STRING)),
        request=body(role=ROLE, is_active=BOOL, password=STRING),
    ),
    ("GET", "/api/admin/sessions"): api(
        obj(sessions=array(SESSION)), query={"include_ended": BOOL}
    ),
    ("POST", "/api/admin/sessions/terminate-others"): api(obj(ended=COUNT)),
    ("POST", "/api/admin/sessions/{session_id:int}/terminate"): api(obj(ended=COUNT)),
    ("GET", "/api/admin/users"): api(obj(users=array(USER))),
    ("POST", "/auth/login"): api(
        obj(user=USER, csrf_token=STRING),
        request=CREDENTIALS,
        urlencoded=CREDENTIALS,
        responses={303: None},
    ),
    ("POST", "/auth/logout"): api(obj(signed_out=BOOL), responses={303: None}),
    ("GET", "/auth/session"): api(obj({"user": obj(username=STRING)}, csrf_token=nullable(STRING))),
}
