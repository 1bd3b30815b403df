-- Sign-in with an identity provider: a person there (issuer, subject) is linked to one user.
-- A link is made only when that person first signs in, never by a matching name.
CREATE TABLE identity_links (
    issuer TEXT NOT NULL,
    subject TEXT NOT NULL,
    user_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (issuer, subject)
);
CREATE INDEX identity_links_by_user ON identity_links (user_id);
