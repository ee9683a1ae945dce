from haystack import Document
from haystack.components.builders import ChatPromptBuilder
from haystack.dataclasses import ChatMessage

from components.generation.prompt_builder import PrecompiledChatPromptBuilder

TEMPLATE = (
    '{% message role="user" %}Sources:{% for document in documents %}\n[{{ loop.index }}] {{ document.content }}'
    "{% endfor %}\nQuestion: {{ query }}{% endmessage %}"
)


class TestPrecompiledChatPromptBuilder:
    def test_renders_exactly_like_the_stock_builder(self):
        documents = [Document(content="pgvector 0.5 added HNSW."), Document(content="Qdrant is written in Rust.")]
        ours = PrecompiledChatPromptBuilder(template=TEMPLATE, required_variables=["query", "documents"])
        stock = ChatPromptBuilder(template=TEMPLATE, required_variables=["query", "documents"])
        for query in ("When did pgvector get HNSW?", "What is Qdrant written in?"):
            assert (
                ours.run(query=query, documents=documents)["prompt"]
                == stock.run(query=query, documents=documents)["prompt"]
            )

    def test_compiles_the_template_once(self):
        builder = PrecompiledChatPromptBuilder(template=TEMPLATE, required_variables=["query", "documents"])
        for index in range(5):
            builder.run(query=f"question {index}", documents=[Document(content="text")])
        info = builder.compiled.cache_info()
        assert info.misses == 1 and info.hits == 4

    def test_a_list_template_and_a_run_template_render_like_the_stock_builder(self):
        messages = [ChatMessage.from_system("Answer briefly."), ChatMessage.from_user("Question: {{ query }}")]
        ours = PrecompiledChatPromptBuilder(template=messages)
        stock = ChatPromptBuilder(template=messages)
        assert ours.run(query="q")["prompt"] == stock.run(query="q")["prompt"]
        other = '{% message role="system" %}Be {{ tone }}.{% endmessage %}'
        assert (
            ours.run(template=other, template_variables={"tone": "brief"}, query="q")["prompt"]
            == stock.run(template=other, template_variables={"tone": "brief"}, query="q")["prompt"]
        )

    def test_the_template_variables_override_the_pipeline_ones(self):
        builder = PrecompiledChatPromptBuilder(template=TEMPLATE, required_variables=["query", "documents"])
        prompt = builder.run(query="pipeline", documents=[], template_variables={"query": "override"})["prompt"]
        assert prompt[0].text.endswith("Question: override")

    def test_missing_required_variable_is_still_refused(self):
        builder = PrecompiledChatPromptBuilder(template=TEMPLATE, required_variables=["query", "documents"])
        try:
            builder.run(query="q")
        except ValueError as exc:
            assert "documents" in str(exc)
        else:
            raise AssertionError("a missing required variable must be refused")

    def test_round_trip(self):
        builder = PrecompiledChatPromptBuilder(template=TEMPLATE, required_variables=["query", "documents"])
        data = builder.to_dict()
        assert data["type"] == "components.generation.prompt_builder.PrecompiledChatPromptBuilder"
        restored = PrecompiledChatPromptBuilder.from_dict(data)
        assert restored.run(query="q", documents=[])["prompt"] == builder.run(query="q", documents=[])["prompt"]
