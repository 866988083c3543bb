"""Shapes of AI model providers: rule id -> makers of one text holding one planted value each."""

from __future__ import annotations

import random
import string

from tests.safety.parts import ALNUM, URLSAFE, Shape, cat, rand

HEX = "0123456789abcdef"
LETTERS = string.ascii_letters


def _mixed(r: random.Random, n: int, alphabet: str = URLSAFE) -> str:
    """``n`` characters of ``alphabet`` holding upper case, lower case and a digit (the rules for
    prefix-less or short-prefixed keys ask for all three; 32 random alphanumerics lack a digit
    about once in three hundred, which made a seed of the corpus miss one)."""
    chars = [r.choice(string.ascii_uppercase), r.choice(string.ascii_lowercase), r.choice(string.digits)]
    chars += [r.choice(alphabet) for _ in range(n - 3)]
    r.shuffle(chars)
    return "".join(chars)


def _openai_marked(r: random.Random, kind: str, n: int) -> str:
    """A current OpenAI key: ``sk-<kind>-``, n characters, the base64 of "OpenAI", n more."""
    return cat("s", "k-", kind, rand(r, n, URLSAFE), "T3Blbk", "FJ", rand(r, n, URLSAFE))


SHAPES: dict[str, list[Shape]] = {
    "openai-api-key": [
        lambda r: cat("s", "k-proj-", rand(r, 48, URLSAFE)),
        lambda r: cat("OPENAI_API_KEY=s", "k-", rand(r, 20), "T3Blbk", "FJ", rand(r, 20)),
        lambda r: cat("s", "k-svcacct-", rand(r, 40, URLSAFE)),
        lambda r: cat('openai.api_key = "', _openai_marked(r, "proj-", 74), '"'),
        lambda r: cat('{"OPENAI_API_KEY": "', _openai_marked(r, "admin-", 58), '"}'),
        lambda r: cat("api_key = 's", "k-None-", rand(r, 20), "T3Blbk", "FJ", rand(r, 20), "'"),
        lambda r: cat("llm --key s", "k-", rand(r, 48), " -m gpt-4o"),
        lambda r: cat("client = OpenAI(api_key='s", "k-my-bot-", rand(r, 20), "T3Blbk", "FJ", rand(r, 20), "')"),
    ],
    "anthropic-api-key": [
        lambda r: cat("s", "k-ant-api03-", rand(r, 93, URLSAFE), "AA"),
        lambda r: cat("ANTHROPIC_API_KEY=s", "k-ant-api03-", rand(r, 60, URLSAFE)),
        lambda r: cat("admin s", "k-ant-admin01-", rand(r, 80, URLSAFE)),
        lambda r: cat("CLAUDE_CODE_OAUTH_TOKEN=s", "k-ant-oat01-", rand(r, 93, URLSAFE), "AA"),
        lambda r: cat('client = anthropic.Anthropic(api_key="s', "k-ant-api03-", rand(r, 93, URLSAFE), 'AA")'),
    ],
    "deepseek-api-key": [
        lambda r: cat("DEEPSEEK_API_KEY=s", "k-", rand(r, 32, HEX)),
        lambda r: cat('client = OpenAI(api_key="s', "k-", rand(r, 32, HEX), '", base_url="https://api.deepseek.com")'),
        lambda r: cat('{"deepseek": {"api_key": "s', "k-", rand(r, 32, HEX), '"}}'),
        lambda r: cat("use s", "k-", rand(r, 32, HEX), " for the deepseek-chat model"),
    ],
    "openrouter-api-key": [
        lambda r: cat("OPENROUTER_API_KEY=s", "k-or-v1-", rand(r, 64, HEX)),
        lambda r: cat('OpenAI(base_url="https://openrouter.ai/api/v1", api_key="s', "k-or-v1-", rand(r, 64, HEX), '")'),
        lambda r: cat("curl -H 'Authorization: Bearer s", "k-or-v1-", rand(r, 64, HEX), "' https://openrouter.ai/"),
    ],
    "langsmith-api-key": [
        lambda r: cat("LANGCHAIN_API_KEY=ls", "v2_pt_", rand(r, 32, HEX), "_", rand(r, 10, HEX)),
        lambda r: cat('os.environ["LANGSMITH_API_KEY"] = "ls', "v2_sk_", rand(r, 32, HEX), "_", rand(r, 10, HEX), '"'),
        lambda r: cat("langsmith:\n  api_key: ls", "v2_pt_", rand(r, 32, HEX), "_", rand(r, 10, HEX)),
    ],
    "groq-api-key": [
        lambda r: cat("GROQ_API_KEY=g", "sk_", rand(r, 52)),
        lambda r: cat('client = Groq(api_key="g', "sk_", rand(r, 52), '")'),
        lambda r: cat("groq:\n  api_key: g", "sk_", rand(r, 52)),
        lambda r: cat("old key g", "sk_", rand(r, 48), " revoked?"),
    ],
    "perplexity-api-key": [
        lambda r: cat("PERPLEXITY_API_KEY=pp", "lx-", rand(r, 48)),
        lambda r: cat('headers = {"Authorization": "Bearer pp', "lx-", rand(r, 48), '"}'),
        lambda r: cat("--pplx-key pp", "lx-", rand(r, 48, HEX)),
    ],
    "xai-api-key": [
        lambda r: cat("XAI_API_KEY=xa", "i-", rand(r, 80)),
        lambda r: cat('grok_token = "xa', "i-", rand(r, 80), '"'),
        lambda r: cat('{"xai": {"key": "xa', "i-", rand(r, 80), '"}}'),
    ],
    "together-api-key": [
        lambda r: cat("TOGETHER_API_KEY=tg", "p_v1_", rand(r, 43, URLSAFE)),
        lambda r: cat('client = Together(api_key="tg', "p_v1_", rand(r, 43, URLSAFE), '")'),
        lambda r: cat("key: tg", "p_v1_", rand(r, 43, URLSAFE)),
    ],
    "together-legacy-api-key": [
        lambda r: cat("TOGETHER_API_KEY=", rand(r, 64, HEX)),
        lambda r: cat('{"together_api_key": "', rand(r, 64, HEX), '"}'),
        lambda r: cat('client = Together(api_key="', rand(r, 64, HEX), '")'),
        lambda r: cat("together_ai_key: ", rand(r, 64, HEX)),
    ],
    "tavily-api-key": [
        lambda r: cat("TAVILY_API_KEY=tv", "ly-", rand(r, 32)),
        lambda r: cat('tavily = TavilyClient(api_key="tv', "ly-dev-", rand(r, 32), '")'),
        lambda r: cat("search key tv", "ly-prod-", rand(r, 28), " (prod)"),
    ],
    "huggingface-token": [
        lambda r: cat("h", "f_", rand(r, 34, LETTERS)),
        lambda r: cat("HF_TOKEN=h", "f_", rand(r, 34, LETTERS)),
        lambda r: cat("hub login h", "f_", rand(r, 34, LETTERS), " done"),
        lambda r: cat("huggingface-cli login --token h", "f_", rand(r, 34, LETTERS)),
        lambda r: cat("load_dataset('org/data', use_auth_token='h", "f_", rand(r, 34, LETTERS), "')"),
    ],
    "huggingface-org-token": [
        lambda r: cat("api", "_org_", rand(r, 34, LETTERS)),
        lambda r: cat("os.environ['HUGGINGFACEHUB_API_TOKEN'] = 'api", "_org_", rand(r, 34, LETTERS), "'"),
        lambda r: cat('hf_token = "api', "_org_", rand(r, 34, LETTERS), '"  # the org token'),
    ],
    "replicate-api-token": [
        lambda r: cat("REPLICATE_API_TOKEN=r", "8_", _mixed(r, 37, ALNUM)),
        lambda r: cat('replicate.Client(api_token="r', "8_", _mixed(r, 37, ALNUM), '")'),
        lambda r: cat(
            "curl -H 'Authorization: Token r", "8_", _mixed(r, 37, ALNUM), "' https://api.replicate.com/v1/models"
        ),
    ],
    "cohere-api-key": [
        lambda r: cat("CO_API_KEY=", _mixed(r, 40, ALNUM)),
        lambda r: cat('co = cohere.Client("', _mixed(r, 40, ALNUM), '")'),
        lambda r: cat('{"cohere_api_key": "', _mixed(r, 40, ALNUM), '"}'),
        lambda r: cat("cohere:\n  api_key: ", _mixed(r, 40, ALNUM)),
        lambda r: cat("export COHERE_API_KEY='", _mixed(r, 40, ALNUM), "'"),
    ],
    "mistral-api-key": [
        lambda r: cat("MISTRAL_API_KEY=", _mixed(r, 32, ALNUM)),
        lambda r: cat('client = Mistral(api_key="', _mixed(r, 32, ALNUM), '")'),
        lambda r: cat("mistral:\n  key: ", _mixed(r, 32, ALNUM)),
        lambda r: cat('{"mistral_api_key": "', _mixed(r, 32, ALNUM), '"}'),
    ],
    "elevenlabs-api-key": [
        lambda r: cat("ELEVENLABS_API_KEY=s", "k_", rand(r, 48, HEX)),
        lambda r: cat("client = ElevenLabs(api_key='s", "k_", rand(r, 48, HEX), "')"),
        lambda r: cat("-H 'xi-api-key: s", "k_", rand(r, 48, HEX), "'"),
    ],
    "composio-api-key": [
        lambda r: cat("COMPOSIO_API_KEY=a", "k_", _mixed(r, 20)),
        lambda r: cat("composio = Composio(api_key='oa", "k_", _mixed(r, 20), "')"),
        lambda r: cat("x-user-api-key: ua", "k_", _mixed(r, 43)),
    ],
}

# Benign look-alikes of this family: texts that must produce no finding at all.
LOOK_ALIKES: list[str] = [
    # placeholders and documentation shapes
    cat("OPENAI_API_KEY=s", "k-your-openai-api-key-here"),
    cat("s", "k-proj-", "x" * 48),
    cat("s", "k-", "1234567890abcdef" * 2),
    cat('api_key = "s', 'k-..."'),
    cat("s", "k-", "a" * 48),
    cat("ANTHROPIC_API_KEY=s", "k-ant-api03-", "X" * 93, "AA"),
    cat("s", "k-ant-api03-..."),
    cat("GROQ_API_KEY=g", "sk_", "x" * 52),
    cat("OPENROUTER_API_KEY=s", "k-or-v1-", "0" * 64),
    cat("ls", "v2_pt_<your-key>"),
    cat("PERPLEXITY_API_KEY=pp", "lx-", "0" * 48),
    cat("XAI_API_KEY=xa", "i-", "x" * 80),
    cat("TAVILY_API_KEY=tv", "ly-dev-", "x" * 32),
    cat("tv", "ly-YOUR_API_KEY"),
    cat("tg", "p_v1_", "*" * 43),
    cat("HF_TOKEN=h", "f_", "x" * 34),
    cat("r", "8_", "X" * 37),
    "MISTRAL_API_KEY=your-mistral-api-key",
    "CO_API_KEY=<your-cohere-key>",
    # identifiers and names that share a prefix
    "- (id)hf_requiredCharacteristicTypesForDisplayMetadata;",
    "static int hf_servingcellpriorityparametersdescrip = -1;",
    "const api_org_controller = require('../../controllers/api/index').organizations;",
    "r8_register_value_for_the_second_stage_0 = 0",
    "xai-grok-2-vision-1212 is the model name",
    "see gsk_ and pplx- prefixes in the provider table",
    # code that reads a key instead of holding one
    'together_api_key = os.environ["TOGETHER_API_KEY"]',
    "client = Mistral(api_key=os.environ['MISTRAL_API_KEY'])",
    'co = cohere.Client(os.getenv("CO_API_KEY"))',
    # hashes next to a vendor's name: one case only, or not a key's name
    "model: mistralai/Mistral-7B-Instruct-v0.2 revision 26bca36bde8333b5d7f72e9ed20ccda6",
    "cohere embed-english-v3.0 checksum 3f786850e387550fdab836ed7e6dc881de23001b",
    "we hash the shards together: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "mistral-large-latest MISTRAL_MODEL_ID=9F86D081884C7D659A2FEAA0C55AD015",
    # ids of the same vendors that are not secrets
    "OPENAI_ORG_ID=org-AbCdEf1234567890GhIjKlMn",
    "OPENAI_PROJECT_ID=proj_AbCdEf1234567890GhIjKl",
    "max_tokens: 4096  # for gpt-4o and claude-3-5-sonnet-20241022",
    # ElevenLabs, Composio: the prefixes end many names; voice and agent ids are not secrets
    "for task_id, disk_usage, risk_score in rows: ask_again = True",
    "ELEVENLABS_VOICE_ID=21m00Tcm4TlvDq8ikWAM",
    cat("s", "k_", "0" * 48),
    "def break_ties_between_equal_ranks(peak_values, weak_refs): ...",
    cat("a", "k_dynamic_font_size_px = 12"),
    cat("COMPOSIO_API_KEY=a", "k_test"),
]
