"""The people the security tests sign in as, and what each holds: a document and a question
of their own, to try from another account."""

from __future__ import annotations

import threading
import uuid

import httpx
import openai

from tests.security.gated_llm import GatedLlm
from tests.security.servers import Ports

QUESTION = "What does the keeper trim at the lighthouse?"


DOCUMENT = "The Kessock lighthouse keeper trims the lamp every night."


class Person:
    """A registered user with a chat model that waits for the test, and the knowledge its
    questions find (so the model is called)."""

    def __init__(self, ports: Ports, llm: GatedLlm) -> None:
        self.ports = ports
        name = self.username = f"u-{uuid.uuid4().hex[:8]}"
        body = {"username": name, "password": "correct horse battery"}
        with httpx.Client(base_url=ports.rest) as anonymous:
            assert anonymous.post("/auth/register", json=body).status_code == 201
            self.token = anonymous.post("/auth/login", json=body).json()["access_token"]
        principal = ports.services.identity.authenticate(self.token)
        self.workspace, self.id = principal.workspace_id, principal.user_id
        with self.client() as http:
            config = http.post("/model-configs", json={
                "name": "gated", "provider": "local", "modelId": "gated", "type": "llm",
                "baseUrl": llm.url,
            })  # fmt: skip
            assert config.status_code == 201, config.text
            self.model = config.json()["id"]
            chosen = http.put("/user-settings", json={"selectedLLMId": self.model})
            assert chosen.status_code == 200, chosen.text
        doc = ports.services.ingest.submit_text(
            self.workspace, path="lighthouse.txt", content=DOCUMENT, mime="text/plain"
        )
        self.document = ports.services.library.wait_until_indexed(
            self.workspace, doc.id, timeout=60
        )

    def client(self) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.token}"}
        return httpx.Client(base_url=self.ports.rest, headers=headers, timeout=90)

    def openai(self) -> openai.OpenAI:
        return openai.OpenAI(
            base_url=self.ports.rest + "/v1", api_key=self.token, max_retries=0, timeout=90
        )

    def in_progress(self) -> int:
        return self.ports.services.chat_slots.in_progress(self.id)


class Held:
    """Chats running in threads until the gated model lets them finish."""

    def __init__(self) -> None:
        self.threads: list[threading.Thread] = []
        self.results: list[object] = []

    def start(self, chat, person: Person) -> None:
        def run() -> None:
            try:
                self.results.append(chat(person))
            except Exception as exc:  # reported by the test
                self.results.append(exc)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        self.threads.append(thread)

    def join(self) -> list[object]:
        for thread in self.threads:
            thread.join(timeout=90)
        return self.results
