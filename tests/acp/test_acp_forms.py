"""How the ACP host fills an agent's form as the scripted human: labels where the field
takes them, the text typed only in a field for a note or an answer of one's own."""

from __future__ import annotations

from harness.adapters.acp.host import form_content
from harness.runtime.questions import Answer
from harness.scenario._model import Reply


def test_a_form_takes_labels_and_keeps_typed_text_for_its_note_field() -> None:
    schema = {"properties": {
        "cuda-fallback": {"type": "string", "title": "Use the fallback?"},
        "cuda-fallback_note": {"type": "string", "title": "Additional answer or note"},
        "pools": {"type": "array", "title": "Which pools?"},
    }}  # fmt: skip
    questions = [{"id": "cuda-fallback", "question": "Use the fallback?"},
                 {"id": "pools", "question": "Which pools?"}]  # fmt: skip
    answers = {
        "cuda-fallback": Reply(items=(Answer("cuda-fallback", ("No",), "only on gpu-2"),)),
        "pools": Reply(items=(Answer("pools", ("a", "b")),)),
    }
    assert form_content(schema, questions, answers) == {
        "cuda-fallback": "No", "cuda-fallback_note": "only on gpu-2", "pools": ["a", "b"],
    }  # fmt: skip
